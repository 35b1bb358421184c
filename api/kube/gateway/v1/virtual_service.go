package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// VirtualService routes a set of domains to upstreams (api/v1.VirtualService).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vs,categories=gatehouse
// +kubebuilder:printcolumn:name="Domains",type=string,JSONPath=`.spec.virtualHost.domains`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.statuses.gatehouse-system.state`,description="state given by the control plane in gatehouse-system"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VirtualService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   apiv1.VirtualServiceSpec `json:"spec"`
	Status apiv1.ResourceStatus     `json:"status,omitempty"`
}
