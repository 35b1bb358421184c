package pipeline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// decodeEdited is decodeFile of path with the first old replaced by new.
func decodeEdited(t *testing.T, path, old, new string) *source.Input {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), old, new, 1)
	if edited == string(data) {
		t.Fatalf("%q not in %s", old, path)
	}
	tmp := filepath.Join(t.TempDir(), "edited.yaml")
	if err := os.WriteFile(tmp, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return decodeFile(t, tmp)
}

// changed lists "<type> <name>" of every resource whose message is not the same
// pointer in a and b, or is in only one of them.
func changed(a, b map[string]xds.Resources) []string {
	var out []string
	for role, byType := range b {
		for typeURL, byName := range byType {
			short := typeURL[strings.LastIndex(typeURL, ".")+1:]
			for name, m := range byName {
				if a[role][typeURL][name] != m {
					out = append(out, short+" "+name)
				}
			}
			for name := range a[role][typeURL] {
				if _, ok := byName[name]; !ok {
					out = append(out, short+" "+name+" (removed)")
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestEditKeepsUnchangedPointers: an edit re-translates only what it touches; every
// other message is handed to Publish as the same pointer.
func TestEditKeepsUnchangedPointers(t *testing.T) {
	basic := filepath.Join("testdata", "basic.yaml")
	tests := []struct {
		name     string
		old, new string
		want     []string
	}{
		{
			name: "upstream port", old: "port: 8090}, {addr: 127.0.0.2", new: "port: 8091}, {addr: 127.0.0.2",
			want: []string{"Cluster gatehouse-system.echo", "ClusterLoadAssignment gatehouse-system.echo"},
		},
		{
			name: "route prefix", old: "prefix: /public", new: "prefix: /open",
			want: []string{"RouteConfiguration http"},
		},
		{
			name: "authconfig", old: "AllowedValues: [alpha, beta]", new: "AllowedValues: [gamma]",
			want: []string{"ExtAuthConfig gatehouse-system.plugin-auth"},
		},
		{
			name: "comment only", old: "# The examples", new: "# Examples",
			want: nil,
		},
		{
			// Another extauth server: the listener's ext_authz cluster changes, and
			// HTTP/2 moves from one cluster to the other; nothing else is rebuilt.
			name: "settings extauthzServerRef",
			old:  "# The examples",
			new: "apiVersion: core.gatehouse.dev/v1\nkind: Settings\nmetadata: {name: default, namespace: gatehouse-system}\n" +
				"spec: {extauth: {extauthzServerRef: {name: echo}}}\n---\n# The examples",
			want: []string{
				"Cluster gatehouse-system.echo", "Cluster gatehouse-system.extauth",
				"ClusterLoadAssignment gatehouse-system.echo", "ClusterLoadAssignment gatehouse-system.extauth",
				"Listener http",
			},
		},
		{
			// Mutual TLS to the extauth server: only its cluster is built again (the
			// listener's ext_authz filter names the same cluster).
			name: "settings extauth tls",
			old:  "# The examples",
			new: "apiVersion: core.gatehouse.dev/v1\nkind: Settings\nmetadata: {name: default, namespace: gatehouse-system}\n" +
				"spec: {extauth: {tls: {sdsDir: /etc/envoy}}}\n---\n# The examples",
			want: []string{"Cluster gatehouse-system.extauth", "ClusterLoadAssignment gatehouse-system.extauth"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pipeline.New(pipeline.Options{})
			p.Apply(decodeFile(t, basic))
			before := p.Stages()
			p.Apply(decodeEdited(t, basic, tt.old, tt.new))
			after := p.Stages()
			if diff := cmp.Diff(tt.want, changed(before.XDS, after.XDS)); diff != "" {
				t.Errorf("changed messages (-want +got):\n%s", diff)
			}
			if tt.name == "route prefix" {
				// The route configuration is new, but the virtual host not edited is the same message.
				rcA := before.XDS[xds.DefaultProxyRole][xds.RouteType]["http"]
				rcB := after.XDS[xds.DefaultProxyRole][xds.RouteType]["http"]
				a, b := virtualHosts(rcA), virtualHosts(rcB)
				if a["apps.web"] != b["apps.web"] || a["gatehouse-system.default"] == b["gatehouse-system.default"] {
					t.Error("want the edited virtual host rebuilt and the other one kept")
				}
			}
		})
	}
}

func TestNackStatuses(t *testing.T) {
	basic := filepath.Join("testdata", "basic.yaml")
	p := pipeline.New(pipeline.Options{})
	p.Apply(decodeFile(t, basic))
	p.RecordNack(xds.Nack{Role: xds.RoleExtauth, NodeID: "host-1", TypeURL: xds.ExtAuthConfigType,
		Names:  []string{"gatehouse-system.plugin-auth"},
		Detail: "gatehouse-system.plugin-auth: required_header.so: no such file"})
	p.RecordNack(xds.Nack{Role: xds.DefaultProxyRole, NodeID: "envoy-1", TypeURL: xds.ClusterType,
		Names: []string{"apps.web"}, Detail: "cluster apps.web: bad"})

	want := map[string][]validate.Status{
		"AuthConfig gatehouse-system.plugin-auth": {
			{State: validate.Accepted, ReportedBy: validate.ReportedBy},
			{State: validate.Rejected, ReportedBy: "extauth/host-1", Reasons: []string{"gatehouse-system.plugin-auth: required_header.so: no such file"}},
		},
		"Upstream apps.web": {
			{State: validate.Accepted, ReportedBy: validate.ReportedBy},
			{State: validate.Rejected, ReportedBy: "gatehouse-system~gateway-proxy/envoy-1", Reasons: []string{"cluster apps.web: bad"}},
		},
	}
	check := func(t *testing.T, want map[string][]validate.Status) {
		t.Helper()
		got := map[string][]validate.Status{}
		for _, r := range p.Stages().Edge.Resources.All() {
			if len(r.Statuses) > 1 {
				got[r.Key().String()] = r.Statuses
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("statuses with NACKs (-want +got):\n%s", diff)
		}
	}
	t.Run("recorded on the resources concerned", func(t *testing.T) { check(t, want) })
	t.Run("kept while the version serves", func(t *testing.T) {
		p.Apply(decodeFile(t, basic))
		check(t, want)
	})
	t.Run("dropped when the version changes", func(t *testing.T) {
		p.Apply(decodeEdited(t, basic, "AllowedValues: [alpha, beta]", "AllowedValues: [gamma]"))
		delete(want, "AuthConfig gatehouse-system.plugin-auth")
		check(t, want)
	})
	if n := len(p.Stages().Nacks); n != 2 {
		t.Errorf("%d NACKs kept, want 2", n)
	}
}

func virtualHosts(m any) map[string]any {
	out := map[string]any{}
	type vhosts interface {
		GetVirtualHosts() []*routev3.VirtualHost
	}
	for _, vh := range m.(vhosts).GetVirtualHosts() {
		out[vh.GetName()] = vh
	}
	return out
}

// TestNackDuringPublish: a client NACKs a resource it was just sent while the other
// roles are still being published (extauth is published first and answers fast). The
// bug was that the NACK was mapped onto the previous run's edge, where the new
// AuthConfig did not exist yet, and was lost.
func TestNackDuringPublish(t *testing.T) {
	basic := filepath.Join("testdata", "basic.yaml")
	var p *pipeline.Pipeline
	nackNow := false
	p = pipeline.New(pipeline.Options{Publish: func(role string, _ xds.Resources) error {
		if nackNow && role == xds.RoleExtauth {
			p.RecordNack(xds.Nack{Role: xds.RoleExtauth, NodeID: "host-1", TypeURL: xds.ExtAuthConfigType,
				Names: []string{"gatehouse-system.other"}, Detail: "gatehouse-system.other: other.so: no such file"})
		}
		return nil
	}})
	p.Apply(decodeFile(t, basic))
	nackNow = true
	p.Apply(decodeEdited(t, basic, "{name: plugin-auth, namespace: gatehouse-system}", "{name: other, namespace: gatehouse-system}"))
	for _, r := range p.Stages().Edge.Resources.All() {
		if r.Key().String() != "AuthConfig gatehouse-system.other" {
			continue
		}
		if len(r.Statuses) != 2 || r.Statuses[1].ReportedBy != "extauth/host-1" {
			t.Fatalf("statuses %+v, want extauth's NACK recorded", r.Statuses)
		}
		return
	}
	t.Fatal("no AuthConfig gatehouse-system.other in the edge")
}

// TestUpstreamEditKeepsTheListeners: the proxies stage after an edit of an Upstream
// is the last one with its clusters replaced; its listeners, a pass over every
// virtual host to make, are the same values. An AuthConfig edit keeps the proxies.
func TestUpstreamEditKeepsTheListeners(t *testing.T) {
	base := pipelinetest.Input(300)
	p := pipeline.New(pipeline.Options{})
	p.Apply(base)
	before := p.Overview().Proxies
	edited := pipelinetest.Replace(base, pipelinetest.Upstream(150, 9999))
	p.Apply(edited)
	after := p.Overview().Proxies
	if len(before) != 1 || len(after) != 1 {
		t.Fatalf("%d proxies, then %d; want one", len(before), len(after))
	}
	if !slices.Equal(before[0].Listeners, after[0].Listeners) {
		t.Error("the listeners were made again for an Upstream edit")
	}
	if before[0].Clusters.Same(after[0].Clusters) {
		t.Fatal("the clusters are the same list after an Upstream edit")
	}
	// The proxies are what a cold run makes of the same input.
	cold := pipeline.New(pipeline.Options{})
	cold.Apply(edited)
	want, _ := json.Marshal(cold.Overview().Proxies)
	got, _ := json.Marshal(after)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("proxies after the edit differ from a cold run's (-cold +edit):\n%s", diff)
	}
	p.Apply(pipelinetest.Replace(edited, pipelinetest.AuthConfig(7, "edited")))
	if again := p.Overview().Proxies; len(again) != 1 || again[0] != after[0] {
		t.Error("an AuthConfig edit made the proxies again")
	}
}

// TestVHDSEditSendsOneVirtualHost: with Settings spec.virtualHostDiscovery, an edit of
// one VirtualService hands Publish that virtual host only (the route configuration and
// every other virtual host are the same messages), and turning it off takes every
// VHDS virtual host away and puts them back into the route configuration.
func TestVHDSEditSendsOneVirtualHost(t *testing.T) {
	vhds := filepath.Join("testdata", "vhds.yaml")
	p := pipeline.New(pipeline.Options{})
	p.Apply(decodeFile(t, vhds))
	before := p.Stages()
	p.Apply(decodeEdited(t, vhds, "prefix: /public", "prefix: /open"))
	after := p.Stages()
	if d := cmp.Diff([]string{"VirtualHost http/gatehouse-system.default"}, changed(before.XDS, after.XDS)); d != "" {
		t.Errorf("changed messages (-want +got):\n%s", d)
	}

	p.Apply(decodeEdited(t, vhds, "virtualHostDiscovery: true", "virtualHostDiscovery: false"))
	off := p.Stages().XDS[xds.DefaultProxyRole]
	if n := len(off[xds.VirtualHostType]); n != 0 {
		t.Errorf("VHDS off: %d virtual hosts still served over VHDS", n)
	}
	if got := virtualHosts(off[xds.RouteType]["http"]); len(got) != 2 {
		t.Errorf("VHDS off: the route configuration has %d virtual hosts, want 2", len(got))
	}
}

// TestVHDSNackStatuses: a proxy's NACK of VHDS virtual hosts is recorded on the
// VirtualServices its detail names, else on every one the rejected response carried.
func TestVHDSNackStatuses(t *testing.T) {
	vhds := filepath.Join("testdata", "vhds.yaml")
	for _, tc := range []struct {
		name, detail string
		want         []string
	}{
		{"named", "virtual host apps.web: domains: bad", []string{"VirtualService apps.web"}},
		{"not named", "refused", []string{"VirtualService apps.web", "VirtualService gatehouse-system.default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pipeline.New(pipeline.Options{})
			p.Apply(decodeFile(t, vhds))
			p.RecordNack(xds.Nack{Role: xds.DefaultProxyRole, NodeID: "envoy-1", TypeURL: xds.VirtualHostType,
				Names: []string{"http/apps.web", "http/gatehouse-system.default"}, Detail: tc.detail})
			var got []string
			for _, r := range p.Stages().Edge.Resources.All() {
				for _, st := range r.Statuses {
					if st.State == validate.Rejected && st.ReportedBy == "gatehouse-system~gateway-proxy/envoy-1" && slices.Equal(st.Reasons, []string{tc.detail}) {
						got = append(got, r.Key().String())
					}
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("VirtualServices Rejected by the NACK (-want +got):\n%s", d)
			}
		})
	}
}
