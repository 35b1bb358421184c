package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/controlplane/listing"
	"gatehouse.dev/gatehouse/controlplane/snapshots"
)

// The control plane's pods in the chart and their admin port.
const (
	controlPlaneSelector = "gatehouse=controlplane"
	controlPlaneAdmin    = "9091"
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

// fetch reads an admin path through the API server's pod proxy: the admin port is in no
// Service (the chart keeps it off the network's front door), so the request goes to a
// ready control-plane pod by name.
func (k *kubeTarget) fetch(ctx context.Context, path string, data any) (snapshots.Status, error) {
	pod, err := k.controlPlanePod(ctx)
	if err != nil {
		return snapshots.Status{}, err
	}
	base := k.client.CoreV1().RESTClient().Get().Namespace(k.namespace).Resource("pods").
		Name(pod + ":" + controlPlaneAdmin).SubResource("proxy").URL().String()
	st, err := snapshots.FetchVia(ctx, k.http, base, path, data)
	if errors.Is(err, snapshots.ErrUnreachable) {
		return st, fmt.Errorf("reaching the control plane's admin through the Kubernetes API server (pod %s/%s, port %s): %w; "+
			"is its control plane ready (gatehouse check --kube -n %s)? --admin ADDR reads a control plane directly",
			k.namespace, pod, controlPlaneAdmin, errors.Unwrap(err), k.namespace)
	}
	return st, err
}

// controlPlanePod is the name of a ready control-plane pod of k.namespace (the first by
// name, so that repeated commands read the same one).
func (k *kubeTarget) controlPlanePod(ctx context.Context) (string, error) {
	pods, err := k.client.CoreV1().Pods(k.namespace).List(ctx, metav1.ListOptions{LabelSelector: controlPlaneSelector})
	if err != nil {
		return "", fmt.Errorf("%w: listing the control plane's pods in %s: %w", snapshots.ErrUnreachable, k.namespace, err)
	}
	var ready []string
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				ready = append(ready, p.Name)
			}
		}
	}
	if len(ready) == 0 {
		return "", fmt.Errorf("%w: no ready control-plane pod (%s) in namespace %s, of %d; is Gatehouse installed in %s and its control plane ready (gatehouse check --kube -n %s)? "+
			"--admin ADDR reads a control plane directly", snapshots.ErrUnreachable, controlPlaneSelector, k.namespace, len(pods.Items), k.namespace, k.namespace)
	}
	slices.Sort(ready)
	return ready[0], nil
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
