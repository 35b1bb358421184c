package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gatehouse.dev/gatehouse/controlplane/check"
)

// kubeWorkloads lists the Deployments and Pods of namespace: two requests, whatever
// their number.
func kubeWorkloads(ctx context.Context, kubeconfig, namespace string) (*check.Workloads, error) {
	cfg, err := kubeConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	deps, err := client.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing deployments in %s: %w", namespace, err)
	}
	podList, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods in %s: %w", namespace, err)
	}
	w := &check.Workloads{Namespace: namespace}
	for _, d := range deps.Items {
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		w.Deployments = append(w.Deployments, check.Deployment{Name: d.Name, Replicas: replicas, Available: d.Status.AvailableReplicas})
	}
	for _, p := range podList.Items {
		cp := check.Pod{Name: p.Name, Phase: string(p.Status.Phase)}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				cp.Ready = c.Status == corev1.ConditionTrue
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if wt := cs.State.Waiting; wt != nil && wt.Reason != "" {
				cp.Waiting = append(cp.Waiting, fmt.Sprintf("%s: %s, %d restarts", cs.Name, wt.Reason, cs.RestartCount))
			}
		}
		w.Pods = append(w.Pods, cp)
	}
	return w, nil
}
