package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// CRDDir is the chart's folder of generated CRDs.
func CRDDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "deploy", "helm", "gatehouse", "crds")
}

// InstallCRDs creates every CRD of the chart (those already there are kept) and waits
// until each is established.
func (e *Env) InstallCRDs(t testing.TB) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out, err := e.CreateCRDs()
	if err != nil {
		t.Fatal(err)
	}
	c, err := apiextensions.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range out {
		Eventually(t, "CRD "+crd.Name+" established", func() error { return established(c, crd.Name) })
	}
	return out
}

// CreateCRDs creates every CRD of the chart (those already there are kept) without
// waiting for them: InstallCRDs waits, and so does WaitCRDs.
func (e *Env) CreateCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	c, err := apiextensions.NewForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(CRDDir(), "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CRDs in %s: %v", CRDDir(), err)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		_, err = c.ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), crd, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating %s: %w", crd.Name, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// WaitCRDs waits until every CRD CreateCRDs made is established.
func (e *Env) WaitCRDs(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) error {
	c, err := apiextensions.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		for {
			err := established(c, crd.Name)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("CRD %s: %w", crd.Name, err)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

func established(c apiextensions.Interface, name string) error {
	got, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, cond := range got.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("conditions %v", got.Status.Conditions)
}
