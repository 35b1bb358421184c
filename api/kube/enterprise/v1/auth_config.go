package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// AuthConfig is an ordered chain of auth steps that routes reference (api/v1.AuthConfig).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ac,categories=gatehouse
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.statuses.gatehouse-system.state`,description="state given by the control plane in gatehouse-system"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AuthConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   apiv1.AuthConfigSpec `json:"spec"`
	Status apiv1.ResourceStatus `json:"status,omitempty"`
}
