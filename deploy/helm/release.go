package helm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// ReleaseName is the Helm release `gatehouse install` makes.
const ReleaseName = "gatehouse"

// InstallTimeout bounds the wait for the chart's hooks (the certificate Job); it is
// Helm's own default.
const InstallTimeout = 5 * time.Minute

// Install installs the embedded chart with values as release ReleaseName of
// namespace, which is created if needed.
func Install(ctx context.Context, cfg *action.Configuration, namespace string, values map[string]any) (*release.Release, error) {
	chrt, err := Chart()
	if err != nil {
		return nil, err
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = ReleaseName, namespace, true
	// The certificate Job runs as a hook before the components start; Helm waits for
	// it, and without a timeout it would wait forever for a Job that cannot run.
	in.Timeout = InstallTimeout
	return in.RunWithContext(ctx, chrt, values)
}

// Uninstall removes release ReleaseName. Helm leaves the chart's CRDs: DeleteCRDs.
func Uninstall(cfg *action.Configuration) error {
	_, err := action.NewUninstall(cfg).Run(ReleaseName)
	return err
}

// ErrNoCRDs says the embedded chart has no CRDs to delete.
var ErrNoCRDs = errors.New("the embedded chart has no CRDs")

// DeleteCRDs deletes the embedded chart's CRDs, and with them every resource of their
// kinds; one already gone is not an error. It returns how many it handled.
func DeleteCRDs(ctx context.Context, rc *rest.Config) (int, error) {
	chrt, err := Chart()
	if err != nil {
		return 0, err
	}
	crds := chrt.CRDObjects()
	if len(crds) == 0 {
		return 0, ErrNoCRDs
	}
	c, err := apiextensions.NewForConfig(rc)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, crd := range crds {
		var meta struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := yaml.Unmarshal(crd.File.Data, &meta); err != nil {
			return n, fmt.Errorf("%s: %w", crd.Filename, err)
		}
		err := c.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, meta.Metadata.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return n, fmt.Errorf("deleting CRD %s: %w", meta.Metadata.Name, err)
		}
		n++
	}
	return n, nil
}
