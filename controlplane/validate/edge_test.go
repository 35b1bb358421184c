package validate_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/internal/chunked"
)

const (
	extauthUpstream = `apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: extauth, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 8083}]}}
`
	authConfig = `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: ac}
spec: {configs: [{pluginAuth: {name: required_header, exportedSymbolName: Plugin}}]}
`
)

func upstream(name string, port int) string {
	return fmt.Sprintf(`apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: %s}
spec: {static: {hosts: [{addr: 127.0.0.1, port: %d}]}}
`, name, port)
}

// vs is a VirtualService with one route to upstream, secured by AuthConfig ac when
// secured, serving domains.
func vs(name, upstream string, secured bool, domains ...string) string {
	opts := ""
	if secured {
		opts = ", options: {extauth: {configRef: {name: ac}}}"
	}
	return fmt.Sprintf(`apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: %s}
spec:
  virtualHost:
    domains: [%s]
    routes: [{routeAction: {single: {upstream: {name: %s}}}%s}]
`, name, quoted(domains), upstream, opts)
}

// decoded remembers the decoding of every document, so randomized tests stay fast.
var decoded sync.Map

// input decodes documents (one resource each) into an ordered Input.
func input(t *testing.T, docs ...string) *source.Input {
	t.Helper()
	var res []source.Resource
	for _, doc := range docs {
		if r, ok := decoded.Load(doc); ok {
			res = append(res, r.(source.Resource))
			continue
		}
		rs, probs := source.Decode([]byte(doc), "test.yaml")
		if len(probs) > 0 || len(rs) != 1 {
			t.Fatalf("decode: %v", probs)
		}
		decoded.Store(doc, rs[0])
		res = append(res, rs[0])
	}
	slices.SortStableFunc(res, func(a, b source.Resource) int { return a.Key().Compare(b.Key()) })
	return source.NewInput("", res, nil)
}

// summary is "<Kind> <id>: <state> (<serving>) <reasons>" per resource.
func summary(e *validate.Edge) []string {
	var out []string
	for _, r := range e.Resources.All() {
		serving := "none"
		switch r.Serving {
		case r.Hash:
			serving = "this"
		case "":
		default:
			serving = "last"
		}
		line := fmt.Sprintf("%s: %s (%s)", r.Key(), r.Statuses[0].State, serving)
		if len(r.Statuses[0].Reasons) > 0 {
			line += " " + strings.Join(r.Statuses[0].Reasons, " | ")
		}
		out = append(out, line)
	}
	return out
}

func servedVirtualHosts(e *validate.Edge) []string {
	var out []string
	for _, vh := range e.Accepted.VirtualHosts.All() {
		out = append(out, vh.Name+"="+strings.Join(vh.Domains, ","))
	}
	return out
}

func TestLastAcceptedVersion(t *testing.T) {
	tests := []struct {
		name   string
		steps  [][]string // the inputs, in order (each with the extauth server's Upstream)
		noExt  bool       // leave the extauth server's Upstream out
		want   []string   // summary after the last step
		served []string   // virtual hosts served after the last step
	}{
		{
			name: "a rejected edit keeps the last accepted version serving",
			steps: [][]string{
				{upstream("echo", 80), vs("web", "echo", false, "a.example")},
				{upstream("echo", 80), vs("web", "nope", false, "b.example")},
			},
			want: []string{
				"Upstream default.echo: Accepted (this)",
				"VirtualService default.web: Rejected (last) spec.virtualHost.routes[0].routeAction.single.upstream: upstream default.nope does not exist | the last accepted version keeps serving",
			},
			served: []string{"default.web=a.example"},
		},
		{
			name: "a rejected upstream edit keeps its last version, so what references it serves",
			steps: [][]string{
				{upstream("echo", 80), vs("web", "echo", false, "a.example")},
				{upstream("echo", 0), vs("web", "echo", false, "a.example")},
			},
			want: []string{
				"Upstream default.echo: Rejected (last) spec.static.hosts[0].port: 0 is not a port | the last accepted version keeps serving",
				"VirtualService default.web: Accepted (this)",
			},
			served: []string{"default.web=a.example"},
		},
		{
			name: "a last version no longer consistent is not served",
			steps: [][]string{
				{upstream("echo", 80), upstream("other", 80), vs("web", "echo", false, "a.example")},
				{upstream("other", 80), vs("web", "nope", false, "a.example")},
			},
			want: []string{
				"Upstream default.other: Accepted (this)",
				"VirtualService default.web: Rejected (none) spec.virtualHost.routes[0].routeAction.single.upstream: upstream default.nope does not exist | not served: no accepted version of it is consistent with the other resources",
			},
		},
		{
			name: "a deleted upstream takes what references it down, with the reason",
			steps: [][]string{
				{upstream("echo", 80), vs("web", "echo", false, "a.example")},
				{vs("web", "echo", false, "a.example")},
			},
			want: []string{
				"VirtualService default.web: Rejected (none) spec.virtualHost.routes[0].routeAction.single.upstream: upstream default.echo does not exist | not served: no accepted version of it is consistent with the other resources",
			},
		},
		{
			name: "a resource deleted and re-created bad has no last version",
			steps: [][]string{
				{upstream("echo", 80)},
				{},
				{upstream("echo", 0)},
			},
			want: []string{"Upstream default.echo: Rejected (none) spec.static.hosts[0].port: 0 is not a port | not served: it was never accepted"},
		},
		{
			name:  "secured routes without the extauth server upstream are rejected, open ones serve",
			noExt: true,
			steps: [][]string{
				{upstream("echo", 80), authConfig, vs("open", "echo", false, "open.example"), vs("secured", "echo", true, "secured.example")},
			},
			want: []string{
				"Upstream default.echo: Accepted (this)",
				"AuthConfig default.ac: Accepted (this)",
				"VirtualService default.open: Accepted (this)",
				"VirtualService default.secured: Rejected (none) spec.virtualHost.routes[0].options.extauth.configRef: the extauth server's upstream gatehouse-system.extauth (Settings spec.extauth.extauthzServerRef) does not exist; secured routes are not served open | not served: it was never accepted",
			},
			served: []string{"default.open=open.example"},
		},
		{
			name: "a removed authconfig closes the routes it secured and leaves the virtual service serving",
			steps: [][]string{
				{upstream("echo", 80), authConfig, vs("secured", "echo", true, "secured.example")},
				{upstream("echo", 80), vs("secured", "echo", true, "secured.example")},
			},
			want: []string{
				"Upstream default.echo: Accepted (this)",
				"VirtualService default.secured: Warning (this) spec.virtualHost.routes[0].options.extauth.configRef: authconfig default.ac does not exist; extauth denies this route's requests (403) until it serves",
			},
			served: []string{"default.secured=secured.example"},
		},
		{
			name: "a new virtual service cannot take a domain that serves",
			steps: [][]string{
				{upstream("echo", 80), vs("b", "echo", false, "x.example")},
				{upstream("echo", 80), vs("a", "echo", false, "x.example"), vs("b", "echo", false, "x.example")},
			},
			want: []string{
				"Upstream default.echo: Accepted (this)",
				`VirtualService default.a: Rejected (none) spec.virtualHost.domains[0]: "x.example" is already served by virtualservice default.b | not served: it was never accepted`,
				`VirtualService default.b: Warning (this) spec.virtualHost.domains[0]: "x.example" is also claimed by virtualservice default.a, which is rejected for it`,
			},
			served: []string{"default.b=x.example"},
		},
		{
			name: "an edit cannot take another's domain: its last version keeps serving",
			steps: [][]string{
				{upstream("echo", 80), vs("a", "echo", false, "a.example"), vs("b", "echo", false, "b.example")},
				{upstream("echo", 80), vs("a", "echo", false, "a.example", "b.example"), vs("b", "echo", false, "b.example")},
			},
			want: []string{
				"Upstream default.echo: Accepted (this)",
				`VirtualService default.a: Rejected (last) spec.virtualHost.domains[1]: "b.example" is already served by virtualservice default.b | the last accepted version keeps serving`,
				`VirtualService default.b: Warning (this) spec.virtualHost.domains[0]: "b.example" is also claimed by virtualservice default.a, which is rejected for it`,
			},
			served: []string{"default.a=a.example", "default.b=b.example"},
		},
		{
			name: "a domain freed by its owner goes to the one that wanted it",
			steps: [][]string{
				{upstream("echo", 80), vs("a", "echo", false, "x.example"), vs("b", "echo", false, "x.example")},
				{upstream("echo", 80), vs("a", "echo", false, "y.example"), vs("b", "echo", false, "x.example")},
			},
			want: []string{
				"Upstream default.echo: Accepted (this)",
				"VirtualService default.a: Accepted (this)",
				"VirtualService default.b: Accepted (this)",
			},
			served: []string{"default.a=y.example", "default.b=x.example"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := validate.New()
			var e *validate.Edge
			for _, docs := range tt.steps {
				if !tt.noExt {
					docs = append([]string{extauthUpstream}, docs...)
				}
				e = v.Validate(input(t, docs...))
			}
			got := slices.DeleteFunc(summary(e), func(s string) bool { return strings.HasPrefix(s, "Upstream gatehouse-system.extauth:") })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.served, servedVirtualHosts(e)); diff != "" {
				t.Errorf("served virtual hosts (-want +got):\n%s", diff)
			}
		})
	}
}

func quoted(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// TestEdgeSharesWhatNeverChanges checks what an edge shares rather than copies: each
// Resource is the Input's own, and the resources Accepted without a reason share
// their statuses, which an append (a client's NACK) must copy rather than write into.
func TestEdgeSharesWhatNeverChanges(t *testing.T) {
	in := input(t, extauthUpstream, upstream("u1", 80), upstream("u2", 81), upstream("bad", 0))
	edge := validate.New().Validate(in)
	i := 0
	for r := range in.Resources.All() {
		if edge.Resources.At(i).Resource != r {
			t.Errorf("edge resource %d (%s) is a copy of the Input's", i, r.Key())
		}
		i++
	}
	byName := map[string]*validate.Resource{}
	for _, r := range edge.Resources.All() {
		byName[r.Name] = r
	}
	nack := func(node string) validate.Status {
		return validate.Status{State: validate.Rejected, ReportedBy: "proxy/" + node}
	}
	u1 := append(byName["u1"].Statuses, nack("n1"))
	u2 := append(byName["u2"].Statuses, nack("n2"))
	accepted := validate.Status{State: validate.Accepted, ReportedBy: validate.ReportedBy}
	for _, tt := range []struct {
		name      string
		got, want []validate.Status
	}{
		{"u1 in the edge", byName["u1"].Statuses, []validate.Status{accepted}},
		{"u2 in the edge", byName["u2"].Statuses, []validate.Status{accepted}},
		{"u1 appended to", u1, []validate.Status{accepted, nack("n1")}},
		{"u2 appended to", u2, []validate.Status{accepted, nack("n2")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
	if byName["bad"].State() != validate.Rejected {
		t.Errorf("Upstream bad: %v; want Rejected", byName["bad"].Statuses)
	}
}

// TestEditCopiesOnlyTheChunksItTouches: an edit's edge shares with the last one every
// chunk of its lists that holds no resource the edit changed, rather than copies of
// lists as long as the input (0.2 MB an edit at 10,000 services), and lists the edit
// does not concern are the same lists.
func TestEditCopiesOnlyTheChunksItTouches(t *testing.T) {
	const n = 1000 // 3,001 resources: a dozen chunks
	base := pipelinetest.Input(n)
	for _, tt := range []struct {
		name string
		obj  any
		// The lists of what serves that the edit replaces an element of.
		clusters, exts, vhosts bool
	}{
		{name: "authconfig", obj: pipelinetest.AuthConfig(n/2, "edited"), exts: true},
		{name: "upstream", obj: pipelinetest.Upstream(n/2, 9999), clusters: true},
		{name: "virtualservice", obj: pipelinetest.VirtualService(n/2, "/edited"), vhosts: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := validate.New()
			before := v.Validate(base)
			after := v.Validate(pipelinetest.Replace(base, tt.obj))
			if len(after.Changed) == 0 {
				t.Fatal("the edit changed nothing")
			}
			touched := map[int]bool{}
			for _, r := range after.Changed {
				i, ok := after.Index(r.Key())
				if !ok || after.Resources.At(i) != r {
					t.Fatalf("%s is not at its place in the edge", r.Key())
				}
				touched[i/chunked.Size] = true
			}
			shared, chunks := chunked.Shared(before.Resources, after.Resources)
			if chunks < 10 || shared != chunks-len(touched) {
				t.Errorf("resources: %d of %d chunks shared, want all but the %d holding a changed resource", shared, chunks, len(touched))
			}
			oneChunk := func(name string, edited bool, same bool, shared, chunks int) {
				t.Helper()
				switch {
				case !edited && !same:
					t.Errorf("%s: not the same list, though the edit replaces none of it", name)
				case edited && shared != chunks-1:
					t.Errorf("%s: %d of %d chunks shared, want all but one", name, shared, chunks)
				}
			}
			shared, chunks = chunked.Shared(before.Accepted.Clusters, after.Accepted.Clusters)
			oneChunk("clusters", tt.clusters, before.Accepted.Clusters.Same(after.Accepted.Clusters), shared, chunks)
			shared, chunks = chunked.Shared(before.ExtAuthConfigs, after.ExtAuthConfigs)
			oneChunk("ExtAuthConfigs", tt.exts, before.ExtAuthConfigs.Same(after.ExtAuthConfigs), shared, chunks)
			shared, chunks = chunked.Shared(before.Accepted.VirtualHosts, after.Accepted.VirtualHosts)
			oneChunk("virtual hosts", tt.vhosts, before.Accepted.VirtualHosts.Same(after.Accepted.VirtualHosts), shared, chunks)
			// The last edge is left as it was: the resource edited there is the one
			// of the Input before.
			k := after.Changed[0].Key()
			i, _ := before.Index(k)
			old, _ := base.Resources.Get(k)
			if before.Resources.At(i).Resource != old {
				t.Errorf("the edge before the edit now holds another version of %s", k)
			}
		})
	}
}

// TestIndexFindsEveryResource: Index finds each resource at its place, and says a key
// absent from the edge is absent.
func TestIndexFindsEveryResource(t *testing.T) {
	edge := validate.New().Validate(pipelinetest.Input(300))
	for i, r := range edge.Resources.All() {
		if got, ok := edge.Index(r.Key()); !ok || got != i {
			t.Fatalf("Index(%s) = %d, %v; want %d, true", r.Key(), got, ok, i)
		}
	}
	for _, k := range []source.Key{
		{APIVersion: "core.gatehouse.dev/v1", Kind: "Upstream", Namespace: "ns00", Name: "absent"},
		{APIVersion: "a", Kind: "Upstream", Name: "before everything"},
		{APIVersion: "zzz", Kind: "Upstream", Name: "after everything"},
	} {
		if i, ok := edge.Index(k); ok {
			t.Errorf("Index(%s) = %d, true; want absent", k, i)
		}
	}
}

// TestChangedSince: an edge reports, against the one before it, exactly the resources
// it does not hold as they were (new, edited, or with another status), whether
// resources were edited, added or removed.
func TestChangedSince(t *testing.T) {
	const n = 600 // 1,801 resources: several chunks
	base := pipelinetest.Input(n)
	with := func(put []any, remove ...source.Key) *source.Input {
		var rs []source.Resource
		for _, o := range put {
			rs = append(rs, pipelinetest.Resource(o, "generated"))
		}
		return &source.Input{Source: base.Source, Resources: base.Resources.With(rs, remove)}
	}
	keyOf := func(o any) source.Key { r := pipelinetest.Resource(o, ""); return r.Key() }
	upstream, authConfig := keyOf(pipelinetest.Upstream(n/2, 1)), keyOf(pipelinetest.AuthConfig(3, "x"))
	for _, tt := range []struct {
		name string
		in   *source.Input
	}{
		{"nothing", base},
		{"one edited", with([]any{pipelinetest.AuthConfig(n/2, "edited")})},
		{"two edited, chunks apart", with([]any{pipelinetest.AuthConfig(1, "edited"), pipelinetest.Upstream(n-1, 1)})},
		{"one added", with([]any{pipelinetest.Upstream(n+5, 1)})},
		{"an Upstream removed, its VirtualService rejected", with(nil, upstream)},
		{"added and removed", with([]any{pipelinetest.AuthConfig(n+1, "new")}, authConfig)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := validate.New()
			before := v.Validate(base)
			after := v.Validate(tt.in)
			held := map[*validate.Resource]bool{}
			for r := range before.Resources.Values() {
				held[r] = true
			}
			var want, got []string
			for r := range after.Resources.Values() {
				if !held[r] {
					want = append(want, r.Key().String())
				}
			}
			after.ChangedSince(before, func(r *validate.Resource) { got = append(got, r.Key().String()) })
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ChangedSince (-want +got):\n%s", diff)
			}
			if tt.name != "nothing" && len(got) == 0 {
				t.Error("nothing reported")
			}
		})
	}
}
