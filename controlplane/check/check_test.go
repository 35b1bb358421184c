package check_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/check"
	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// healthy is a system with an AuthConfig, an extauth server and the default proxy
// following the control plane, and nothing wrong.
func healthy() *check.Health {
	return &check.Health{
		Status: snapshots.Status{Clients: []xds.Client{{Role: xds.RoleExtauth, Node: "ex-1"}, {Role: xds.DefaultProxyRole, Node: "gw-1"}}},
		Data:   snapshots.HealthData{Serving: map[string]int{"AuthConfig": 1}, Proxies: []string{xds.DefaultProxyRole}},
	}
}

func TestRun(t *testing.T) {
	rejected := snapshots.ResourceHealth{Kind: "Upstream", Namespace: "a", Name: "u", Origin: "u.yaml", State: validate.Rejected,
		Statuses: []validate.Status{{State: validate.Rejected, Reasons: []string{"spec.static.hosts[0].port: 0 is not a port"}, ReportedBy: validate.ReportedBy}}}
	warned := snapshots.ResourceHealth{Kind: "VirtualService", Namespace: "a", Name: "v", State: validate.Warning,
		Statuses: []validate.Status{{State: validate.Warning, Reasons: []string{"spec.x: deprecated"}, ReportedBy: validate.ReportedBy}}}
	nacked := snapshots.ResourceHealth{Kind: "AuthConfig", Namespace: "a", Name: "ac", State: validate.Rejected,
		Statuses: []validate.Status{{State: validate.Accepted, ReportedBy: validate.ReportedBy},
			{State: validate.Rejected, Reasons: []string{"a.ac: plugin missing"}, ReportedBy: "extauth/ex-1"}}}
	tests := []struct {
		name    string
		edit    func(h *check.Health)
		opts    check.Options
		errors  map[string][]string // by check; a check not named has none
		warns   int
		healthy bool
	}{
		{name: "healthy", edit: func(*check.Health) {}, healthy: true},
		{
			name:   "rejected by validation is an error of its kind, not of xds",
			edit:   func(h *check.Health) { h.Data.Resources = []snapshots.ResourceHealth{rejected} },
			errors: map[string][]string{"upstreams": {"Upstream a.u (u.yaml): Rejected\n    spec.static.hosts[0].port: 0 is not a port"}},
		},
		{
			name:    "a warning does not fail",
			edit:    func(h *check.Health) { h.Data.Resources = []snapshots.ResourceHealth{warned} },
			warns:   1,
			healthy: true,
		},
		{
			name:   "a client's NACK is an xds error",
			edit:   func(h *check.Health) { h.Data.Resources = []snapshots.ResourceHealth{nacked} },
			errors: map[string][]string{"auth-configs": {"AuthConfig a.ac: Rejected by extauth/ex-1\n    a.ac: plugin missing"}},
		},
		{
			name: "a client that has not answered, and one without a role",
			edit: func(h *check.Health) {
				h.Status.Clients[1].Unanswered = map[string]int{xds.ClusterType: 2}
				h.Status.Clients = append(h.Status.Clients, xds.Client{Node: "lost"})
			},
			errors: map[string][]string{"xds": {
				`node "gw-1" (role gatehouse-system~gateway-proxy): has not ACKed the latest Cluster (2 responses unanswered)`,
				`node "lost": names no valid role in its metadata; it is served nothing`}},
		},
		{
			name: "nobody follows: extauth and the proxy",
			edit: func(h *check.Health) { h.Status.Clients = nil },
			errors: map[string][]string{"deployments": {
				`extauth: no extauth server follows the control plane (role "extauth"); secured routes deny every request`,
				"proxy gatehouse-system~gateway-proxy: no gateway proxy follows the control plane with this role"}},
		},
		{
			name: "a file that does not read, and publish failures",
			edit: func(h *check.Health) {
				h.Data.Problems = []source.Problem{{Origin: "x.yaml", Line: 3, Message: "yaml: bad"}}
				h.Data.PublishErrors = map[string]string{xds.RoleExtauth: "inconsistent", xds.DefaultProxyRole: "invalid listener"}
			},
			errors: map[string][]string{
				"sources": {"cannot read x.yaml:3: yaml: bad (its last good resources keep serving)"},
				"proxies": {"proxy gatehouse-system~gateway-proxy: not published, the previous config keeps serving: invalid listener"},
				"xds":     {"role extauth: not published, the previous configs keep serving: inconsistent"},
			},
		},
		{
			name:    "excluded checks are neither run nor printed",
			edit:    func(h *check.Health) { h.Data.Resources = []snapshots.ResourceHealth{rejected} },
			opts:    check.Options{Exclude: []string{"upstreams"}},
			healthy: true,
		},
		{
			name: "pods on Kubernetes",
			edit: func(h *check.Health) {
				h.Workloads = &check.Workloads{Namespace: "gs", Deployments: []check.Deployment{{Name: "extauth", Replicas: 2, Available: 2}},
					Pods: []check.Pod{{Name: "ok", Phase: "Running", Ready: true}, {Name: "done", Phase: "Succeeded"}, {Name: "p", Phase: "Pending", Waiting: []string{"main: ImagePullBackOff, 0 restarts"}}}}
			},
			opts:   check.Options{Kubernetes: true},
			errors: map[string][]string{"pods": {"pod gs/p: Pending (main: ImagePullBackOff, 0 restarts)"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := healthy()
			tt.edit(h)
			r := check.Run(h, nil, tt.opts)
			got := map[string][]string{}
			names := []string{}
			for _, c := range r.Checks {
				names = append(names, c.Name)
				if len(c.Errors) > 0 {
					got[c.Name] = c.Errors
				}
			}
			want := tt.errors
			if want == nil {
				want = map[string][]string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if r.Healthy != tt.healthy || r.Warnings != tt.warns {
				t.Errorf("healthy %t warnings %d, want %t %d", r.Healthy, r.Warnings, tt.healthy, tt.warns)
			}
			for _, x := range tt.opts.Exclude {
				if strings.Contains(strings.Join(names, ","), x) {
					t.Errorf("excluded check %s ran", x)
				}
			}
			if (strings.Contains(strings.Join(names, ","), "pods")) != tt.opts.Kubernetes {
				t.Errorf("checks %v: pods only on Kubernetes", names)
			}
		})
	}
}

func TestRunWithoutSnapshot(t *testing.T) {
	r := check.Run(nil, errors.New("no snapshot yet"), check.Options{})
	if r.Healthy || r.Checks[0].Name != "deployments" || r.Checks[0].Status != "errors" || r.Checks[1].Status != "skipped" {
		t.Errorf("report without a snapshot: %+v", r)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "Checking Deployments... 1 Errors!\n  control plane: no snapshot yet\nChecking Sources... Skipped (the control plane has no snapshot)\nChecking Upstreams... Skipped (the control plane has no snapshot)\n") {
		t.Errorf("text:\n%s", b.String())
	}
}

func TestRunWarnsOfCertificatesThatEndWithinAWeek(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	soon, later, past := now.Add(3*24*time.Hour), now.Add(30*24*time.Hour), now.Add(-time.Hour)
	for _, tc := range []struct {
		name      string
		server    *time.Time
		client    *time.Time
		wantWarns []string
	}{
		{"none over mTLS", nil, nil, nil},
		{"far from their end", &later, &later, nil},
		{"the control plane's ends in 3 days", &soon, &later, []string{"the control plane's certificate spiffe://td/ns/gh/role/controlplane expires in 72h0m0s (2026-11-30T12:00:00Z)"}},
		{"a client's expired", &later, &past, []string{`node "ex-1" (role extauth): its certificate spiffe://td/ns/gh/role/extauth expired at 2026-11-27T11:00:00Z`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := healthy()
			h.Now = now
			if tc.server != nil {
				h.Data.Certificate = &mtls.Peer{ID: "spiffe://td/ns/gh/role/controlplane", NotAfter: *tc.server}
			}
			if tc.client != nil {
				h.Status.Clients[0].Identity, h.Status.Clients[0].NotAfter = "spiffe://td/ns/gh/role/extauth", tc.client
			}
			var warns []string
			for _, res := range check.Run(h, nil, check.Options{}).Checks {
				if res.Name == "xds" {
					warns = res.Warnings
				}
			}
			if len(warns) != len(tc.wantWarns) {
				t.Fatalf("warnings %q, want %q", warns, tc.wantWarns)
			}
			for i, w := range tc.wantWarns {
				if !strings.HasPrefix(warns[i], w) {
					t.Errorf("warning %q, want it to start %q", warns[i], w)
				}
			}
		})
	}
}
