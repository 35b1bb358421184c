// Package v1 is the core.gatehouse.dev API group as Kubernetes serves it; only controller-gen reads it.
//
// +kubebuilder:object:generate=false
// +groupName=core.gatehouse.dev
package v1
