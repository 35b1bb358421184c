package devgateway_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/devgateway"
)

// confToken is the token a case sends: how it is signed, its claims, and where it goes
// ("" is "authorization: Bearer <token>"; "cookie" is a cookie named token; any other
// name is that header, without a prefix).
type confToken struct {
	sign   signKind
	claims map[string]any
	in     string
}

type confCase struct {
	name               string
	host, method, path string
	headers            map[string]string
	token              *confToken
	status             int
	body               string            // checked when not ""
	upstream           map[string]string // headers the upstream sees (absent: must not)
	// extauth are headers ext_authz must see (absent: must not); nil when the route does
	// not reach ext_authz.
	extauth map[string]string
}

// absent is an upstream header the upstream must not see.
const absent = "(absent)"

func claims(extra map[string]any) map[string]any {
	c := map[string]any{"iss": "https://idp.example", "sub": "alice", "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

func confCases() []confCase {
	dev := claims(map[string]any{"team": "dev"})
	return []confCase{
		{
			name: "valid token, allowed claim: the upstream sees the claims as headers, not the token", host: "api.example", method: "GET", path: "/api/items/1",
			token: &confToken{claims: dev}, status: 200,
			upstream: map[string]string{"x-user": "alice", "x-team": "dev", "authorization": absent},
			extauth:  map[string]string{"x-user": "alice", "x-team": "dev", "authorization": absent},
		},
		{
			name: "a claim header sent by the client is replaced by the claim", host: "api.example", method: "GET", path: "/api/items",
			headers: map[string]string{"x-team": "dev", "x-user": "root"}, token: &confToken{claims: claims(map[string]any{"team": "dev"})}, status: 200,
			upstream: map[string]string{"x-user": "alice", "x-team": "dev"}, extauth: map[string]string{"x-user": "alice", "x-team": "dev"},
		},
		{
			name: "a claim header the token lacks cannot be sent by the client", host: "api.example", method: "GET", path: "/whoami",
			headers: map[string]string{"x-team": "admin"}, token: &confToken{claims: claims(nil)}, status: 200,
			upstream: map[string]string{"x-user": "alice", "x-team": absent},
		},
		{name: "no token", host: "api.example", method: "GET", path: "/api/items", status: 401, body: "Jwt is missing"},
		{name: "token in the wrong header", host: "api.example", method: "GET", path: "/api/items", token: &confToken{claims: dev, in: "x-token"}, status: 401, body: "Jwt is missing"},
		{name: "wrong issuer", host: "api.example", method: "GET", path: "/api/items", token: &confToken{claims: claims(map[string]any{"team": "dev", "iss": "https://evil.example"})}, status: 401},
		{name: "expired", host: "api.example", method: "GET", path: "/api/items", token: &confToken{claims: claims(map[string]any{"team": "dev", "exp": time.Now().Add(-time.Hour).Unix()})}, status: 401, body: "Jwt is expired"},
		{name: "bad signature", host: "api.example", method: "GET", path: "/api/items", token: &confToken{sign: signForged, claims: dev}, status: 401, body: "Jwt verification fails"},
		{name: "alg none", host: "api.example", method: "GET", path: "/api/items", token: &confToken{sign: signNone, claims: dev}, status: 401},
		{name: "unknown kid", host: "api.example", method: "GET", path: "/api/items", token: &confToken{sign: signUnknownKid, claims: dev}, status: 401},
		{name: "right token, claim not allowed", host: "api.example", method: "GET", path: "/api/items", token: &confToken{claims: claims(map[string]any{"team": "ops"})}, status: 403, body: "RBAC: access denied"},
		{name: "method outside the permission", host: "api.example", method: "POST", path: "/api/items", token: &confToken{claims: dev}, status: 403, body: "RBAC: access denied"},
		{name: "path outside the permission", host: "api.example", method: "GET", path: "/api/admin", token: &confToken{claims: dev}, status: 403, body: "RBAC: access denied"},
		{
			name: "cookie to header through an extractor with a subgroup, then jwt on that header", host: "cookie.example", method: "GET", path: "/page",
			token: &confToken{claims: claims(nil), in: "cookie"}, status: 200, upstream: map[string]string{"x-user": "alice", "authorization": absent},
		},
		{name: "no cookie: an empty extraction, no token", host: "cookie.example", method: "GET", path: "/page", status: 401, body: "Jwt is missing"},
		{
			name: "whole match (subgroup 0) and a capture group", host: "transform.example", method: "GET", path: "/",
			headers: map[string]string{"x-src": "abc-42"}, status: 200, upstream: map[string]string{"x-whole": "", "x-num": "n=42;"},
		},
		{
			name: "the regex must match the whole value", host: "transform.example", method: "GET", path: "/",
			headers: map[string]string{"x-src": "abc"}, status: 200, upstream: map[string]string{"x-whole": "abc", "x-num": "n=;"},
		},
		{
			name: "a missing source header yields empty values", host: "transform.example", method: "GET", path: "/",
			status: 200, upstream: map[string]string{"x-whole": "", "x-num": "n=;"},
		},
		{
			name: "requestHeadersToRemove really removes", host: "transform.example", method: "GET", path: "/",
			headers: map[string]string{"x-secret": "s3cret", "x-kept": "1"}, status: 200, upstream: map[string]string{"x-secret": absent, "x-kept": "1"},
		},
	}
}

// request is the case's request headers, with its token placed.
func (c confCase) request(t *testing.T, p *idp) (http.Header, string) {
	h := http.Header{}
	for k, v := range c.headers {
		h.Set(k, v)
	}
	tok := ""
	if c.token != nil {
		tok = p.mint(t, c.token.sign, c.token.claims)
		switch c.token.in {
		case "":
			h.Set("Authorization", "Bearer "+tok)
		case "cookie":
			h.Set("Cookie", "theme=dark; token="+tok+"; lang=en")
		default:
			h.Set(c.token.in, tok)
		}
	}
	return h, tok
}

// confResources translates the fixture for this run's ports and checks every resource
// is Accepted and every Envoy resource valid and consistent.
func confResources(t *testing.T, echoAddr, jwksAddr, extauthAddr string) xds.Resources {
	t.Helper()
	data, err := os.ReadFile("testdata/conformance.yaml")
	if err != nil {
		t.Fatal(err)
	}
	port := func(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }
	text := strings.NewReplacer("port: ECHO", "port: "+port(echoAddr), "port: JWKS", "port: "+port(jwksAddr), "port: EXTAUTH", "port: "+port(extauthAddr)).Replace(string(data))
	res, probs := source.Decode([]byte(text), "conformance.yaml")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	published := map[string]xds.Resources{}
	pl := pipeline.New(pipeline.Options{Log: zerolog.Nop(), Publish: func(role string, r xds.Resources) error {
		published[role] = r
		return nil
	}})
	in := source.NewInput("test", res, nil)
	pl.Apply(in)
	for _, r := range pl.Stages().Edge.Resources.All() {
		if st := r.Statuses[0]; st.State != validate.Accepted {
			t.Fatalf("%s: %s %v", r.Key(), st.State, st.Reasons)
		}
	}
	out := published[xds.DefaultProxyRole]
	if err := pipelinetest.Valid(out); err != nil {
		t.Fatalf("the Envoy resources are not valid: %v", err)
	}
	// The cases read the resources' fields: the translation's compact ones, decoded (a
	// copy: what was published is never modified).
	full := make(xds.Resources, len(out))
	for typ, byName := range out {
		full[typ] = make(map[string]types.Resource, len(byName))
		for name, r := range byName {
			e, err := xds.Expand(r)
			if err != nil {
				t.Fatal(err)
			}
			full[typ][name] = e
		}
	}
	out = full
	return out
}

// TestRouteOptionsConformance runs the same cases against the Envoy resources the
// control plane emits (predicting Envoy's answer from them) and through the running
// gateway fed those resources, with a real key set server and keys made per run.
func TestRouteOptionsConformance(t *testing.T) {
	p := newIDP(t)
	echo := echoUpstream(t, nil)
	authz := &authzServer{}
	resources := confResources(t, echo, p.srv.Listener.Addr().String(), startAuthz(t, authz))
	view := newEnvoyView(t, resources)

	t.Run("translation", func(t *testing.T) {
		view.checkProviders(t, "conf.jwks", "http://jwks.example/keys")
		for _, c := range confCases() {
			t.Run(c.name, func(t *testing.T) {
				h, tok := c.request(t, p)
				got := view.predict(t, c, h, tok)
				checkAnswer(t, c, got.status, got.body, got.upstream)
				if c.extauth != nil {
					checkHeaders(t, "ext_authz", c.extauth, got.extauth)
				}
			})
		}
	})

	t.Run("gateway", func(t *testing.T) {
		url := serveResources(t, resources)
		for _, c := range confCases() {
			t.Run(c.name, func(t *testing.T) {
				h, _ := c.request(t, p)
				before := len(authz.requests())
				resp, body := do(t, c.method, url+c.path, c.host, h)
				var up map[string]string
				if resp.StatusCode == http.StatusOK {
					up = echoed(t, body).Headers
				}
				checkAnswer(t, c, resp.StatusCode, string(body), up)
				if c.extauth != nil {
					reqs := authz.requests()[before:]
					if len(reqs) != 1 {
						t.Fatalf("ext_authz asked %d times, want once", len(reqs))
					}
					seen := map[string]string{}
					for _, hv := range reqs[0].GetAttributes().GetRequest().GetHttp().GetHeaderMap().GetHeaders() {
						seen[hv.GetKey()] = string(hv.GetRawValue())
					}
					checkHeaders(t, "ext_authz", c.extauth, seen)
				}
			})
		}
	})
}

func checkAnswer(t *testing.T, c confCase, status int, body string, upstream map[string]string) {
	t.Helper()
	if status != c.status {
		t.Fatalf("status %d (%q), want %d", status, body, c.status)
	}
	if c.body != "" && body != c.body {
		t.Errorf("body %q, want %q", body, c.body)
	}
	checkHeaders(t, "upstream", c.upstream, upstream)
}

func checkHeaders(t *testing.T, who string, want, got map[string]string) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		switch {
		case w == absent && ok:
			t.Errorf("%s saw %s: %q, want none", who, k, g)
		case w != absent && (!ok || g != w):
			t.Errorf("%s saw %s: %q, want %q", who, k, g, w)
		}
	}
}

// serveResources feeds the resources to a Proxy serving its HTTP listener on loopback
// and waits until it serves (after the key sets' first fetch).
func serveResources(t *testing.T, resources xds.Resources) string {
	t.Helper()
	px := devgateway.NewProxy(devgateway.ProxyOptions{Log: newTestLog(t)})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- px.Serve(ctx, devgateway.HTTPPort, lis) }()
	t.Cleanup(func() { cancel(); <-done; px.Close() })
	for _, typ := range devgateway.Types {
		set := map[string]*anypb.Any{}
		for n, r := range resources[typ] {
			set[n] = mustAny(t, r.(types.Resource))
		}
		if err := px.Handle(typ, set); err != nil {
			t.Fatalf("Handle(%s): %v", typ, err)
		}
	}
	eventually(t, "the listener served", func() bool { return px.Ready(devgateway.HTTPPort) })
	return "http://" + lis.Addr().String()
}
