// Package v1 is the gateway.gatehouse.dev API group as Kubernetes serves it; only controller-gen reads it.
//
// +kubebuilder:object:generate=false
// +groupName=gateway.gatehouse.dev
package v1
