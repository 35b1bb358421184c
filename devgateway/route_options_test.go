package devgateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"regexp"
	"testing"

	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/devgateway"
)

// TestEarlyLuaIsTheControlPlanesScript: the gateway runs (in Go) exactly the script the
// control plane emits; a changed script must be reviewed and implemented again.
func TestEarlyLuaIsTheControlPlanesScript(t *testing.T) {
	sum := sha256.Sum256([]byte(translate.EarlyLua))
	if got := hex.EncodeToString(sum[:]); got != devgateway.EarlyLuaSHA256 {
		t.Fatalf("translate.EarlyLua has sha256 %s, the gateway implements %s", got, devgateway.EarlyLuaSHA256)
	}
}

// extractDirect is the documented meaning of an extractor: the regex matches the whole
// value; the value is the whole match (subgroup 0) or the group; "" otherwise.
func extractDirect(re *regexp.Regexp, subgroup int, value string) string {
	m := re.FindStringSubmatch(value)
	if m == nil {
		return ""
	}
	return m[subgroup]
}

func checkExtractor(t *testing.T, regex string, subgroup int, value string) {
	re, err := regexp.Compile(`^(?:` + regex + `)$`)
	if err != nil || subgroup < 0 || subgroup > re.NumSubexp() || subgroup > 8 {
		return // refused by validation
	}
	pattern, subst := translate.ExtractorPattern(regex, subgroup)
	got, ok := devgateway.Rewrite(pattern, subst, value)
	if !ok {
		t.Fatalf("the emitted rewrite %q → %q is refused", pattern, subst)
	}
	if want := extractDirect(re, subgroup, value); got != want {
		t.Fatalf("regex %q subgroup %d on %q: header_to_metadata gives %q, the extractor means %q", regex, subgroup, value, got, want)
	}
}

func TestExtractor(t *testing.T) {
	tests := []struct {
		regex    string
		subgroup int
		value    string
	}{
		{`.*token=([^;]*).*`, 1, "a=1; token=abc; b=2"},
		{`.*token=([^;]*).*`, 1, "no cookie here"},
		{`[a-z]+`, 0, "abc"},
		{`[a-z]+`, 0, "abc-42"},
		{`([a-z]+)-([0-9]+)`, 2, "abc-42"},
		{`(a)|(b)`, 2, "a"},
		{`x*`, 0, ""},
		{`.*`, 0, "line\nbreak"},
		{`a$`, 0, "a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.regex+"/"+tt.value, func(t *testing.T) { checkExtractor(t, tt.regex, tt.subgroup, tt.value) })
	}
}

// FuzzExtractor: what the control plane emits for an extractor (a header_to_metadata
// rewrite), as the gateway applies it, always means the documented extraction.
func FuzzExtractor(f *testing.F) {
	f.Add(`.*token=([^;]*).*`, 1, "a=1; token=abc; b=2")
	f.Add(`[a-z]+`, 0, "abc-42")
	f.Add(`(a)|(b)`, 2, "b")
	f.Add(`(?i)X(y)?`, 1, "x")
	f.Add(`.*`, 0, "line\nbreak")
	f.Fuzz(func(t *testing.T, regex string, subgroup int, value string) {
		checkExtractor(t, regex, subgroup, value)
	})
}

// TestJWKSRotation: a token whose kid the cached key set lacks makes the gateway fetch
// the set again (the issuer rotated); a known kid is served from the cache.
func TestJWKSRotation(t *testing.T) {
	p := newIDP(t)
	url := serveResources(t, confResources(t, echoUpstream(t, nil), p.srv.Listener.Addr().String(), startAuthz(t, &authzServer{})))
	get := func(kind signKind) int {
		h := http.Header{"Authorization": {"Bearer " + p.mint(t, kind, claims(nil))}}
		resp, _ := do(t, "GET", url+"/whoami", "api.example", h)
		return resp.StatusCode
	}
	if s := get(signGood); s != http.StatusOK {
		t.Fatalf("status %d with the published key", s)
	}
	before := p.fetches.Load()
	for range 3 {
		if s := get(signGood); s != http.StatusOK {
			t.Fatalf("status %d", s)
		}
	}
	if n := p.fetches.Load() - before; n != 0 {
		t.Errorf("%d key set fetches for known kids; the set is cached", n)
	}
	if s := get(signUnknownKid); s != http.StatusUnauthorized {
		t.Fatalf("status %d for a kid nobody published, want 401", s)
	}
	p.publish("k1", "k2")
	eventually(t, "the rotated key accepted", func() bool { return get(signUnknownKid) == http.StatusOK })
}
