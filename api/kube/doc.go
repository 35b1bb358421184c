// Package kube holds nothing but the packages the Kubernetes CustomResourceDefinitions
// are generated from (`make generate` runs controller-gen on api/kube/...): one package
// per API group, each wrapping the api/v1 spec types in Kubernetes object metadata and
// the status subresource. The control plane itself reads resources as api/v1 types.
package kube
