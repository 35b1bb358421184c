package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// Upstream is a destination for routes (api/v1.Upstream); discovery writes one per
// Service port.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=us,categories=gatehouse
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.kube.serviceName`
// +kubebuilder:printcolumn:name="Port",type=integer,JSONPath=`.spec.kube.servicePort`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.statuses.gatehouse-system.state`,description="state given by the control plane in gatehouse-system"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Upstream struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   apiv1.UpstreamSpec   `json:"spec"`
	Status apiv1.ResourceStatus `json:"status,omitempty"`
}

// Settings configures the gateway as a whole (api/v1.Settings).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ghs,categories=gatehouse
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.statuses.gatehouse-system.state`,description="state given by the control plane in gatehouse-system"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Settings struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   apiv1.SettingsSpec   `json:"spec"`
	Status apiv1.ResourceStatus `json:"status,omitempty"`
}
