package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/controlplane/listing"
	"gatehouse.dev/gatehouse/controlplane/snapshots"
)

// The control plane's Service in the chart and its admin port.
const (
	controlPlaneService = "controlplane"
	controlPlaneAdmin   = "9091"
)

// kubeTarget is a cluster Gatehouse is installed in, in namespace.
type kubeTarget struct {
	namespace string
	client    kubernetes.Interface
	dyn       dynamic.Interface
	http      *http.Client
}

// kubeConfig loads a kubeconfig: the file given, else KUBECONFIG, ~/.kube/config, or
// the in-cluster service account.
func kubeConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

func newKubeTarget(kubeconfig, namespace string) (*kubeTarget, error) {
	cfg, err := kubeConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	k := &kubeTarget{namespace: namespace}
	if k.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if k.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if k.http, err = rest.HTTPClientFor(cfg); err != nil {
		return nil, err
	}
	return k, nil
}

// fetch reads an admin path through the API server's Service proxy: the API server picks
// a ready endpoint of the control plane's Service and forwards the request to its pod.
func (k *kubeTarget) fetch(ctx context.Context, path string, data any) (snapshots.Status, error) {
	base := k.client.CoreV1().RESTClient().Get().Namespace(k.namespace).Resource("services").
		Name(controlPlaneService + ":" + controlPlaneAdmin).SubResource("proxy").URL().String()
	st, err := snapshots.FetchVia(ctx, k.http, base, path, data)
	if errors.Is(err, snapshots.ErrUnreachable) {
		return st, fmt.Errorf("reaching the control plane's admin through the Kubernetes API server (Service %s/%s, port %s): %w; "+
			"is Gatehouse installed in %s and its control plane ready (gatehouse check --kube -n %s)? --admin ADDR reads a control plane directly",
			k.namespace, controlPlaneService, controlPlaneAdmin, errors.Unwrap(err), k.namespace, k.namespace)
	}
	return st, err
}

// edge lists the custom resources of kind in every namespace with the status entry the
// control plane of k.namespace wrote on each: what `get` shows from the admin's edge.
func (k *kubeTarget) edge(ctx context.Context, kind string) (*listing.Edge, error) {
	for _, kd := range kube.Kinds {
		if kd.Kind != kind {
			continue
		}
		list, err := k.dyn.Resource(kd.GVR).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s in the cluster: %w", kd.GVR.GroupResource(), err)
		}
		e := &listing.Edge{Resources: map[string][]listing.Resource{}}
		for i := range list.Items {
			r, err := kube.Listed(&list.Items[i], k.namespace)
			if err != nil {
				return nil, err
			}
			e.Resources[kind] = append(e.Resources[kind], r)
		}
		return e, nil
	}
	return nil, fmt.Errorf("no custom resource kind %s", kind)
}
