package devgateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	h2mv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_to_metadata/v3"
	jwtv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// EarlyLuaSHA256 is the SHA-256 of the one Lua script the gateway runs (in Go): the
// control plane's early-stage script (translate.EarlyLua; a test keeps them equal). Any
// other script is refused.
const EarlyLuaSHA256 = "0fe47ee16dbc3b7ca7165db8643c1ceb5d75af90d673d709ad11a977492f85fe"

// optionFilters are the HTTP filters before ext_authz, by name ("" when absent).
type optionFilters struct {
	extract, lua, rbac string
	jwt                *jwtFilterSpec
}

type jwtFilterSpec struct {
	name      string
	providers map[string]*providerSpec
	reqs      map[string][]string // requirement → providers, any one of which suffices
}

type providerSpec struct {
	name, issuer      string
	headers           []tokenHeader
	uri, cluster      string
	timeout, cacheFor time.Duration
	claims            []claimHeader
	payloadKey        string
	forward           bool
}

// Filter ranks: the order the gateway runs them in, which the listener must use.
const (
	rankExtract = iota
	rankLua
	rankJWT
	rankRBAC
	rankAuthz
	rankRouter
)

func parseLua(f *hcmv3.HttpFilter, path string, pr *problems) {
	var l luav3.Lua
	if err := unpackTyped(f.GetTypedConfig(), &l); err != nil {
		pr.addf(path, "%v", err)
		return
	}
	pr.only(&l, path, "default_source_code", "inline_code")
	src := l.GetInlineCode()
	if ds := l.GetDefaultSourceCode(); ds != nil {
		src = ds.GetInlineString()
	}
	sum := sha256.Sum256([]byte(src))
	if hex.EncodeToString(sum[:]) != EarlyLuaSHA256 {
		pr.addf(path, "only Gatehouse's early-stage script is supported (sha256 %s)", EarlyLuaSHA256)
	}
}

func parseHeaderToMetadata(f *hcmv3.HttpFilter, path string, pr *problems) {
	var c h2mv3.Config
	if err := unpackTyped(f.GetTypedConfig(), &c); err != nil {
		pr.addf(path, "%v", err)
		return
	}
	if len(c.GetRequestRules())+len(c.GetResponseRules()) > 0 {
		pr.addf(path, "rules are supported per route only")
	}
	pr.only(&c, path, "stat_prefix")
}

// parseExtractRules reads a per-route header_to_metadata config: request rules on a
// header, with a regex rewrite or none, STRING values, nothing removed.
func parseExtractRules(c *h2mv3.Config, path string, pr *problems) []extractRule {
	pr.only(c, path, "request_rules", "stat_prefix")
	var out []extractRule
	for i, r := range c.GetRequestRules() {
		rp := fmt.Sprintf("%s.request_rules[%d]", path, i)
		pr.only(r, rp, "header", "on_header_present")
		kv := r.GetOnHeaderPresent()
		if r.GetHeader() == "" || kv == nil {
			pr.addf(rp, "a header and on_header_present are required")
			continue
		}
		kp := join(rp, "on_header_present")
		pr.only(kv, kp, "metadata_namespace", "key", "regex_value_rewrite", "type")
		if kv.GetType() != h2mv3.Config_STRING {
			pr.addf(join(kp, "type"), "%s is not supported (STRING)", kv.GetType())
		}
		x := extractRule{header: r.GetHeader(), ns: kv.GetMetadataNamespace(), key: kv.GetKey()}
		if x.ns == "" {
			x.ns = "envoy.filters.http.header_to_metadata"
		}
		if rw := kv.GetRegexValueRewrite(); rw != nil {
			re, err := regexp.Compile(rw.GetPattern().GetRegex())
			subst, ok := goSubstitution(rw.GetSubstitution())
			switch {
			case err != nil:
				pr.addf(join(kp, "regex_value_rewrite.pattern"), "%v", err)
			case !ok:
				pr.addf(join(kp, "regex_value_rewrite.substitution"), "only \\0 to \\9 and \\\\ may follow a backslash")
			}
			x.re, x.subst = re, subst
		}
		out = append(out, x)
	}
	return out
}

func parseJWTFilter(f *hcmv3.HttpFilter, path string, pr *problems) *jwtFilterSpec {
	var c jwtv3.JwtAuthentication
	if err := unpackTyped(f.GetTypedConfig(), &c); err != nil {
		pr.addf(path, "%v", err)
		return nil
	}
	pr.only(&c, path, "providers", "requirement_map")
	s := &jwtFilterSpec{name: f.GetName(), providers: map[string]*providerSpec{}, reqs: map[string][]string{}}
	for name, p := range c.GetProviders() {
		s.providers[name] = parseProvider(name, p, path+".providers["+name+"]", pr)
	}
	for name, r := range c.GetRequirementMap() {
		rp := path + ".requirement_map[" + name + "]"
		var names []string
		switch {
		case r.GetProviderName() != "":
			names = []string{r.GetProviderName()}
		case r.GetRequiresAny() != nil:
			for i, sub := range r.GetRequiresAny().GetRequirements() {
				if sub.GetProviderName() == "" {
					pr.addf(fmt.Sprintf("%s.requires_any.requirements[%d]", rp, i), "only provider_name is supported")
				}
				names = append(names, sub.GetProviderName())
			}
		default:
			pr.addf(rp, "only provider_name and requires_any of provider names are supported")
		}
		for _, n := range names {
			if _, ok := s.providers[n]; !ok && n != "" {
				pr.addf(rp, "provider %q does not exist", n)
			}
		}
		s.reqs[name] = names
	}
	return s
}

func parseProvider(name string, p *jwtv3.JwtProvider, path string, pr *problems) *providerSpec {
	pr.only(p, path, "issuer", "from_headers", "remote_jwks", "claim_to_headers", "payload_in_metadata", "forward")
	s := &providerSpec{name: name, issuer: p.GetIssuer(), payloadKey: p.GetPayloadInMetadata(), forward: p.GetForward()}
	for _, h := range p.GetFromHeaders() {
		s.headers = append(s.headers, tokenHeader{name: h.GetName(), prefix: h.GetValuePrefix()})
	}
	if len(s.headers) == 0 {
		s.headers = []tokenHeader{{name: "authorization", prefix: "Bearer "}}
	}
	for _, c := range p.GetClaimToHeaders() {
		s.claims = append(s.claims, claimHeader{claim: c.GetClaimName(), header: c.GetHeaderName()})
	}
	rj := p.GetRemoteJwks()
	if rj == nil {
		pr.addf(path, "remote_jwks is required (local_jwks is not supported)")
		return s
	}
	rp := join(path, "remote_jwks")
	pr.only(rj, rp, "http_uri", "cache_duration", "async_fetch")
	hu := rj.GetHttpUri()
	pr.only(hu, join(rp, "http_uri"), "uri", "cluster", "timeout")
	if u, err := url.Parse(hu.GetUri()); err != nil || u.Host == "" {
		pr.addf(join(rp, "http_uri.uri"), "%q is not a URL", hu.GetUri())
	}
	s.uri, s.cluster, s.timeout = hu.GetUri(), hu.GetCluster(), hu.GetTimeout().AsDuration()
	s.cacheFor = 10 * time.Minute // Envoy's default
	if d := rj.GetCacheDuration(); d != nil {
		s.cacheFor = d.AsDuration()
	}
	return s
}

func parseRBACFilter(f *hcmv3.HttpFilter, path string, pr *problems) {
	var c rbacfilterv3.RBAC
	if err := unpackTyped(f.GetTypedConfig(), &c); err != nil {
		pr.addf(path, "%v", err)
		return
	}
	// Rules are per route: a listener-wide policy is not supported.
	pr.only(&c, path)
}

// routeLua reads the early stage's data from a route's metadata.
func routeLua(md *corev3.Metadata, path string, pr *problems) *luaStage {
	st := md.GetFilterMetadata()["envoy.filters.http.lua"]
	if st == nil {
		return nil
	}
	cfg := st.GetFields()["gatehouse"].GetStructValue()
	if cfg == nil {
		return nil
	}
	p := join(path, "filter_metadata[envoy.filters.http.lua].gatehouse")
	s := &luaStage{}
	for _, v := range cfg.GetFields()["remove"].GetListValue().GetValues() {
		s.remove = append(s.remove, v.GetStringValue())
	}
	for i, hv := range cfg.GetFields()["headers"].GetListValue().GetValues() {
		h := hv.GetStructValue().GetFields()
		lh := luaHeader{name: h["name"].GetStringValue()}
		if lh.name == "" {
			pr.addf(fmt.Sprintf("%s.headers[%d].name", p, i), "is required")
		}
		for _, pv := range h["parts"].GetListValue().GetValues() {
			f := pv.GetStructValue().GetFields()
			lh.parts = append(lh.parts, luaPart{text: f["text"].GetStringValue(), value: f["value"].GetStringValue()})
		}
		s.headers = append(s.headers, lh)
	}
	return s
}
