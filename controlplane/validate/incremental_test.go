package validate_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/validate"
)

// universe is every variant of every resource the random edits pick from; "" is the
// resource being absent.
func universe() map[string][]string {
	secret := func(name, typ string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s}\ntype: %s\ndata: {client-secret: c2VjcmV0}\n", name, typ)
	}
	oidc := func(name, secretName string) string {
		return fmt.Sprintf(`apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: %s}
spec:
  configs:
    - oauth2:
        oidcAuthorizationCode:
          appUrl: https://app.example.com
          callbackPath: /callback
          clientId: app
          clientSecretRef: {name: %s}
          issuerUrl: https://idp.example.com
`, name, secretName)
	}
	settings := func(timeout, server string) string {
		return fmt.Sprintf("apiVersion: core.gatehouse.dev/v1\nkind: Settings\nmetadata: {name: default}\nspec: {extauth: {requestTimeout: %q, extauthzServerRef: {name: %s}}}\n", timeout, server)
	}
	u := map[string][]string{
		"settings": {"", settings("1s", "extauth"), settings("2s", "ext2"), settings("bad", "extauth")},
		"ext":      {"", upstream("extauth", 8083), upstream("extauth", 0)},
		"ext2":     {"", upstream("ext2", 8083)},
		"s1":       {"", secret("s1", "extauth.gatehouse.dev/oauth"), secret("s1", "Opaque"), secret("s1", "kubernetes.io/tls")},
		"ac":       {"", authConfig, strings.Replace(authConfig, "required_header", "other", 1)},
		"oidc":     {"", oidc("oidc", "s1"), oidc("oidc", "s2")},
	}
	for _, up := range []string{"u1", "u2", "u3"} {
		u[up] = []string{"", upstream(up, 80), upstream(up, 81), upstream(up, 0)}
	}
	domains := []string{"a.example", "b.example", "c.example", "*"}
	for _, name := range []string{"v1", "v2", "v3", "v4", "v5"} {
		variants := []string{""}
		for _, up := range []string{"u1", "u2", "u3", "nope"} {
			for i, d := range domains {
				variants = append(variants, vs(name, up, i%2 == 0, d), vs(name, up, false, d, domains[(i+1)%len(domains)]))
			}
		}
		variants = append(variants, strings.Replace(vs(name, "u1", false, "a.example"), "  virtualHost:", "  sslConfig: {secretRef: {name: s1}}\n  virtualHost:", 1))
		variants = append(variants, strings.Replace(vs(name, "u2", true, "b.example"), "name: ac", "name: oidc", 1))
		u[name] = variants
	}
	return u
}

// TestIncrementalMatchesFull applies random edit sequences to two Validators, one
// incremental and one re-validating everything on every run, and requires the same
// statuses and the same served virtual hosts, clusters and configs after every step.
func TestIncrementalMatchesFull(t *testing.T) {
	u := universe()
	var names []string
	for n := range u {
		names = append(names, n)
	}
	slices.Sort(names) // the edits depend on the seed alone
	patchedRuns := 0
	t.Cleanup(func() {
		if patchedRuns == 0 {
			t.Error("no edge was patched: the comparison did not exercise Validator.patch")
		}
	})
	for seed := range uint64(200) {
		patched := 0
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 7))
			state := map[string]string{}
			for _, n := range names {
				state[n] = u[n][rnd.IntN(len(u[n]))]
			}
			inc, full := validate.New(), validate.New()
			full.Full = true
			for step := range 30 {
				var docs []string
				for _, n := range names {
					if state[n] != "" {
						docs = append(docs, state[n])
					}
				}
				in := input(t, docs...)
				a, b := inc.Validate(in), full.Validate(in)
				if diff := cmp.Diff(describeEdge(b), describeEdge(a)); diff != "" {
					t.Fatalf("step %d: incremental differs from full (-full +incremental):\n%s\ninput:\n%s", step, diff, strings.Join(docs, "---\n"))
				}
				n, err := validate.CheckOutput(inc, in)
				if err != nil {
					t.Fatalf("step %d: the edge patched from the last one differs from a pass over every entry: %v", step, err)
				}
				patched = n
				for range 1 + rnd.IntN(3) {
					n := names[rnd.IntN(len(names))]
					state[n] = u[n][rnd.IntN(len(u[n]))]
				}
			}
		})
		patchedRuns += patched
	}
}

func describeEdge(e *validate.Edge) []string {
	out := summary(e)
	out = append(out, servedVirtualHosts(e)...)
	for _, c := range e.Accepted.Clusters.All() {
		out = append(out, fmt.Sprintf("cluster %s %v", c.Name, c.Hosts))
	}
	for _, c := range e.ExtAuthConfigs.All() {
		out = append(out, fmt.Sprintf("config %s %v", c.GetConfigId(), c.GetRequestTimeout().AsDuration()))
	}
	if e.Accepted.Extauthz != nil {
		out = append(out, "extauthz "+e.Accepted.Extauthz.Name)
	}
	return append(out, e.Accepted.Settings.String())
}
