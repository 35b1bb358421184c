package kube

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
)

// Desired is the status entry the pipeline's statuses of r make, about generation:
// the worst state, every reason one a line (a client's NACK prefixed by the client),
// and the reporter of the worst state.
func Desired(r *validate.Resource, generation int64) apiv1.ReporterStatus {
	state := r.State()
	out := apiv1.ReporterStatus{State: string(state), ReportedBy: validate.ReportedBy, ObservedGeneration: generation}
	var reasons []string
	reporter := ""
	for _, st := range r.Statuses {
		if st.State == state && reporter == "" {
			reporter = st.ReportedBy
		}
		for _, reason := range st.Reasons {
			if st.ReportedBy != validate.ReportedBy {
				reason = st.ReportedBy + ": " + reason
			}
			reasons = append(reasons, reason)
		}
	}
	if reporter != "" {
		out.ReportedBy = reporter
	}
	out.Reason = strings.Join(reasons, "\n")
	return out
}

// current reads status.statuses.<namespace> of a stored object.
func current(u *unstructured.Unstructured, namespace string) (apiv1.ReporterStatus, bool) {
	m, ok, _ := unstructured.NestedMap(u.Object, "status", "statuses", namespace)
	if !ok {
		return apiv1.ReporterStatus{}, false
	}
	var out apiv1.ReporterStatus
	out.State, _ = m["state"].(string)
	out.Reason, _ = m["reason"].(string)
	out.ReportedBy, _ = m["reportedBy"].(string)
	out.DataPlane, _ = m["dataPlane"].(string)
	out.ObservedGeneration, _, _ = unstructured.NestedInt64(m, "observedGeneration")
	return out, true
}

// kindOf returns the custom resource kind of key, if it is one.
func kindOf(key source.Key) (kind, bool) {
	for _, k := range Kinds {
		if k.APIVersion == key.APIVersion && k.Kind == key.Kind {
			return k, true
		}
	}
	return kind{}, false
}
