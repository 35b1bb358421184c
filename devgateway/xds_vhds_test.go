package devgateway_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/devgateway"
)

// vhdsRoutes is the "http" route configuration with VHDS on and, unless nil, one
// inline virtual host.
func vhdsRoutes(inline *routev3.VirtualHost) *routev3.RouteConfiguration {
	rc := &routev3.RouteConfiguration{Name: "http", Vhds: &routev3.Vhds{ConfigSource: ads()}}
	if inline != nil {
		rc.VirtualHosts = []*routev3.VirtualHost{inline}
	}
	return rc
}

// hostTo is a virtual host named name for name.example, sending everything to cluster.
func hostTo(t *testing.T, name, cluster string) *routev3.VirtualHost {
	return vhost(name, []string{name + ".example"}, openRoute(t, "/", cluster))
}

// vhdsSet is a full set of VirtualHost resources of the route configuration route,
// each renamed route/<its name>, as the resource is.
func vhdsSet(t *testing.T, route string, vhs ...*routev3.VirtualHost) map[string]*anypb.Any {
	out := map[string]*anypb.Any{}
	for _, vh := range vhs {
		vh = proto.Clone(vh).(*routev3.VirtualHost)
		vh.Name = route + "/" + vh.GetName()
		out[vh.GetName()] = mustAny(t, vh)
	}
	return out
}

// answers is, for each host, the upstream that answered GET / (its X-Upstream) or the
// status code when it is not 200.
func answers(t *testing.T, url string, hosts ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, h := range hosts {
		resp, _ := do(t, "GET", url+"/", h+".example", nil)
		if resp.StatusCode == http.StatusOK {
			out[h] = resp.Header.Get("X-Upstream")
		} else {
			out[h] = strconv.Itoa(resp.StatusCode)
		}
	}
	return out
}

// TestVHDSServes: a route configuration with vhds serves its inline virtual hosts and
// the VirtualHost resources named after it, once the first VirtualHost response has
// arrived and every cluster their routes use is there; editing or removing one
// VirtualHost changes that host only.
func TestVHDSServes(t *testing.T) {
	p, url := newProxy(t)
	a, b, c := tagged(t, "a"), tagged(t, "b"), tagged(t, "c")
	hosts := []string{"inline", "web", "api", "other"}
	steps := []struct {
		name  string
		typ   string
		res   map[string]*anypb.Any
		ready bool
		want  map[string]string
	}{
		{
			name: "no VirtualHost response yet", typ: resourcev3.RouteType, res: set(t, vhdsRoutes(hostTo(t, "inline", "ns.a"))),
			want: map[string]string{"inline": "503", "web": "503", "api": "503", "other": "503"},
		},
		{
			name: "an empty VirtualHost response", typ: resourcev3.VirtualHostType, res: vhdsSet(t, "http"), ready: true,
			want: map[string]string{"inline": "a", "web": "404", "api": "404", "other": "404"},
		},
		{
			name: "a host whose cluster is missing: the previous table serves", typ: resourcev3.VirtualHostType, ready: true,
			res:  vhdsSet(t, "http", hostTo(t, "web", "ns.c")),
			want: map[string]string{"inline": "a", "web": "404", "api": "404", "other": "404"},
		},
		{
			name: "its cluster", typ: resourcev3.ClusterType, res: set(t, cluster(t, "ns.a", a), cluster(t, "ns.b", b), cluster(t, "ns.c", c)), ready: true,
			want: map[string]string{"inline": "a", "web": "c", "api": "404", "other": "404"},
		},
		{
			name: "a second host, and one of another route configuration (unused)", typ: resourcev3.VirtualHostType, ready: true,
			res: func() map[string]*anypb.Any {
				s := vhdsSet(t, "http", hostTo(t, "web", "ns.c"), hostTo(t, "api", "ns.b"))
				for n, a := range vhdsSet(t, "https", hostTo(t, "other", "ns.a")) {
					s[n] = a
				}
				return s
			}(),
			want: map[string]string{"inline": "a", "web": "c", "api": "b", "other": "404"},
		},
		{
			name: "one host edited", typ: resourcev3.VirtualHostType, res: vhdsSet(t, "http", hostTo(t, "web", "ns.c"), hostTo(t, "api", "ns.a")), ready: true,
			want: map[string]string{"inline": "a", "web": "c", "api": "a", "other": "404"},
		},
		{
			name: "one host removed", typ: resourcev3.VirtualHostType, res: vhdsSet(t, "http", hostTo(t, "web", "ns.c")), ready: true,
			want: map[string]string{"inline": "a", "web": "c", "api": "404", "other": "404"},
		},
		{
			name: "the route configuration without vhds: its VirtualHosts unused", typ: resourcev3.RouteType, ready: true,
			res:  set(t, &routev3.RouteConfiguration{Name: "http", VirtualHosts: []*routev3.VirtualHost{hostTo(t, "inline", "ns.b")}}),
			want: map[string]string{"inline": "b", "web": "404", "api": "404", "other": "404"},
		},
	}
	feed(t, p, cluster(t, "ns.a", a), cluster(t, "ns.b", b), listenerWith(t, "http", devgateway.HTTPPort, hcm(t, "http", routerFilter(t))))
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if err := p.Handle(s.typ, s.res); err != nil {
				t.Fatalf("Handle(%s): %v", s.typ, err)
			}
			if d := cmp.Diff(s.want, answers(t, url, hosts...)); d != "" {
				t.Errorf("answers by host (-want +got):\n%s", d)
			}
			if got := p.Ready(devgateway.HTTPPort); got != s.ready {
				t.Errorf("Ready = %v, want %v", got, s.ready)
			}
		})
	}
}

// TestVHDSRefuses: a VirtualHost or route configuration the gateway cannot take is
// NACKed with what is wrong and never served; every other one is applied and what was
// served before keeps serving. Sent again as the same resource, it is not reported again.
func TestVHDSRefuses(t *testing.T) {
	a, b := tagged(t, "a"), tagged(t, "b")
	web, api := hostTo(t, "web", "ns.a"), hostTo(t, "api", "ns.a")
	regex := hostTo(t, "api", "ns.b")
	regex.Routes[0].Match.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "/.*"}}
	tests := []struct {
		name    string
		typ     string
		res     map[string]*anypb.Any
		wantErr string
		want    map[string]string // the answers after it
	}{
		{
			name: "a virtual host with a problem: its previous version kept", typ: resourcev3.VirtualHostType,
			res:     vhdsSet(t, "http", hostTo(t, "web", "ns.b"), regex),
			wantErr: "virtual host http/api: routes[0].match.safe_regex: not supported by the dev gateway",
			want:    map[string]string{"web": "b", "api": "a"},
		},
		{
			// aaa sorts first: refused because it is what this update brings.
			name: "a domain another VirtualHost has", typ: resourcev3.VirtualHostType,
			res:     vhdsSet(t, "http", web, api, vhost("aaa", []string{"WEB.example", "aaa.example"}, openRoute(t, "/", "ns.b"))),
			wantErr: `virtual host http/aaa: domains[0]: "web.example" is also a domain of virtual host http/web`,
			want:    map[string]string{"web": "a", "api": "a", "aaa": "404"},
		},
		{
			name: "a VirtualHost edited to take another's domain: its previous version kept", typ: resourcev3.VirtualHostType,
			res:     vhdsSet(t, "http", web, vhost("api", []string{"api.example", "web.example"}, openRoute(t, "/", "ns.b"))),
			wantErr: `virtual host http/api: domains[1]: "web.example" is also a domain of virtual host http/web`,
			want:    map[string]string{"web": "a", "api": "a"},
		},
		{
			name: "a domain of an inline virtual host", typ: resourcev3.VirtualHostType,
			res:     vhdsSet(t, "http", web, api, vhost("aaa", []string{"inline.example"}, openRoute(t, "/", "ns.b"))),
			wantErr: `virtual host http/aaa: domains[0]: "inline.example" is also a domain of virtual host inline`,
			want:    map[string]string{"web": "a", "api": "a", "inline": "a"},
		},
		{
			name: "an inline virtual host with a VirtualHost's domain", typ: resourcev3.RouteType,
			res:     set(t, vhdsRoutes(vhost("inline", []string{"inline.example", "api.example"}, openRoute(t, "/", "ns.b")))),
			wantErr: `route config http: virtual_hosts[0].domains[1]: "api.example" is also a domain of virtual host http/api`,
			want:    map[string]string{"web": "a", "api": "a", "inline": "a"},
		},
		{
			name: "a virtual host named other than the resource", typ: resourcev3.VirtualHostType,
			res: func() map[string]*anypb.Any {
				s := vhdsSet(t, "http", web, api)
				s["http/new"] = mustAny(t, hostTo(t, "api2", "ns.b"))
				return s
			}(),
			wantErr: `virtual host http/new: name: "api2" is not the resource's name "http/new"`,
			want:    map[string]string{"web": "a", "api": "a", "api2": "404"},
		},
		{
			name: "a resource name without its route configuration", typ: resourcev3.VirtualHostType,
			res: func() map[string]*anypb.Any {
				s := vhdsSet(t, "http", web, api)
				s["new"] = mustAny(t, hostTo(t, "new", "ns.b"))
				return s
			}(),
			wantErr: `virtual host new: the resource's name "new" is not <route config>/<virtual host>`,
			want:    map[string]string{"web": "a", "api": "a", "new": "404"},
		},
		{
			name: "vhds from somewhere other than ADS", typ: resourcev3.RouteType,
			res: func() map[string]*anypb.Any {
				rc := vhdsRoutes(nil)
				rc.Vhds.ConfigSource = &corev3.ConfigSource{ConfigSourceSpecifier: &corev3.ConfigSource_Path{Path: "/x"}}
				return set(t, rc)
			}(),
			wantErr: "route config http: vhds.config_source.path: not supported by the dev gateway",
			want:    map[string]string{"web": "a", "api": "a"},
		},
		{
			name: "vhds in an inline route configuration", typ: resourcev3.ListenerType,
			res: func() map[string]*anypb.Any {
				h := hcm(t, "http", routerFilter(t))
				h.RouteSpecifier = &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: vhdsRoutes(nil)}
				return set(t, listenerWith(t, "http", devgateway.HTTPPort, h))
			}(),
			wantErr: "route_config.vhds: VHDS is supported for a route configuration taken over RDS only",
			want:    map[string]string{"web": "a", "api": "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, url := newProxy(t)
			feed(t, p, cluster(t, "ns.a", a), cluster(t, "ns.b", b), listenerWith(t, "http", devgateway.HTTPPort, hcm(t, "http", routerFilter(t))), vhdsRoutes(hostTo(t, "inline", "ns.a")))
			if err := p.Handle(resourcev3.VirtualHostType, vhdsSet(t, "http", web, api)); err != nil {
				t.Fatal(err)
			}
			err := p.Handle(tt.typ, tt.res)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Handle error:\n%v\nwant it to contain:\n%s", err, tt.wantErr)
			}
			if d := cmp.Diff(tt.want, answers(t, url, keys(tt.want)...)); d != "" {
				t.Errorf("answers by host (-want +got):\n%s", d)
			}
			if err := p.Handle(tt.typ, tt.res); err != nil {
				t.Errorf("the same resources again: %v, want no error (nothing new to judge)", err)
			}
		})
	}
}
