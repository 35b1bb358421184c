package kube_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/controlplane/validate"
)

func TestDesired(t *testing.T) {
	tests := []struct {
		name     string
		statuses []validate.Status
		want     apiv1.ReporterStatus
	}{{
		name:     "accepted",
		statuses: []validate.Status{{State: validate.Accepted, ReportedBy: "gatehouse"}},
		want:     apiv1.ReporterStatus{State: "Accepted", ReportedBy: "gatehouse", ObservedGeneration: 3},
	}, {
		name: "rejected with every reason",
		statuses: []validate.Status{{State: validate.Rejected, ReportedBy: "gatehouse",
			Reasons: []string{"spec.virtualHost.domains: at least one domain is required", "not served: it was never accepted"}}},
		want: apiv1.ReporterStatus{State: "Rejected", ReportedBy: "gatehouse", ObservedGeneration: 3,
			Reason: "spec.virtualHost.domains: at least one domain is required\nnot served: it was never accepted"},
	}, {
		name: "a client's NACK",
		statuses: []validate.Status{{State: validate.Accepted, ReportedBy: "gatehouse"},
			{State: validate.Rejected, ReportedBy: "extauth/pod-1", Reasons: []string{"config default.auth: plugin x.so not found"}}},
		want: apiv1.ReporterStatus{State: "Rejected", ReportedBy: "extauth/pod-1", ObservedGeneration: 3,
			Reason: "extauth/pod-1: config default.auth: plugin x.so not found"},
	}, {
		name: "warning",
		statuses: []validate.Status{{State: validate.Warning, ReportedBy: "gatehouse",
			Reasons: []string{"spec.virtualHost.routes[1]: shadowed by routes[0]"}}},
		want: apiv1.ReporterStatus{State: "Warning", ReportedBy: "gatehouse", ObservedGeneration: 3,
			Reason: "spec.virtualHost.routes[1]: shadowed by routes[0]"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := kube.Desired(&validate.Resource{Statuses: tt.statuses}, 3)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
