package main

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"
)

// deleteCRDObjects deletes the chart's CRDs; one already gone is not an error.
func deleteCRDObjects(ctx context.Context, flags *genericclioptions.ConfigFlags, crds []chart.CRD) (int, error) {
	rc, err := flags.ToRESTConfig()
	if err != nil {
		return 0, err
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
