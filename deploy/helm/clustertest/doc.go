// Package clustertest installs the gatehouse chart's rendered objects into a real
// Kubernetes API server (internal/kubetest): every object the chart renders must be
// accepted by the API server's own validation.
package clustertest
