// Package v1 is the enterprise.gateway.gatehouse.dev API group as Kubernetes serves it; only controller-gen reads it.
//
// +kubebuilder:object:generate=false
// +groupName=enterprise.gateway.gatehouse.dev
package v1
