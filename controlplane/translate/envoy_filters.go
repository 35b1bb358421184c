package translate

import (
	_ "embed"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	h2mv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_to_metadata/v3"
	jwtv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Filter names, which are also the keys of their per-route config and (Lua) route
// metadata.
const (
	HeaderToMetadataFilterName = "envoy.filters.http.header_to_metadata"
	LuaFilterName              = "envoy.filters.http.lua"
	JWTFilterName              = "envoy.filters.http.jwt_authn"
	RBACFilterName             = "envoy.filters.http.rbac"
	// TransformationNamespace is the dynamic metadata namespace of extracted values.
	TransformationNamespace = "gatehouse.transformation"
	// LuaMetadataKey holds a route's early-stage data in its Lua filter metadata.
	LuaMetadataKey = "gatehouse"
	// JWTPayloadKey is where jwt_authn leaves a verified payload in its metadata.
	JWTPayloadKey = "jwt_payload"
	// JWKSCacheDuration is how long a fetched key set is used before it is fetched again.
	JWKSCacheDuration = 5 * time.Minute
	// JWKSFetchTimeout bounds one key set fetch.
	JWKSFetchTimeout = 5 * time.Second
)

// EarlyLua is the one Lua script the early stage runs. Routes pass it data, never code.
//
//go:embed lua/early.lua
var EarlyLua string

// listenerNeeds is which optional filters the routes of a listener use.
type listenerNeeds struct {
	extract, lua, rbac bool
	jwt                []*RouteOptions // routes with jwt, in order
}

func needsOf(vhosts []*VirtualHost) listenerNeeds {
	var n listenerNeeds
	seen := map[*RouteOptions]bool{}
	for _, vh := range vhosts {
		for _, r := range vh.Routes {
			o := r.Options
			if o == nil || seen[o] {
				continue
			}
			seen[o] = true
			n.extract = n.extract || len(o.Extractors) > 0
			n.lua = n.lua || len(o.Headers) > 0 || len(o.ClaimHeaders) > 0
			n.rbac = n.rbac || o.RBAC != nil
			if len(o.JWT) > 0 {
				n.jwt = append(n.jwt, o)
			}
		}
	}
	return n
}

// optionFilters are the HTTP filters before ext_authz, in the order that gives each
// its inputs: extraction then the Lua stage (claim headers removed, templates set),
// then jwt_authn (claims become headers and metadata), then rbac (on those claims).
// A filter no route uses is left out.
func optionFilters(n listenerNeeds) []*hcmv3.HttpFilter {
	var fs []*hcmv3.HttpFilter
	if n.extract {
		fs = append(fs, httpFilter(HeaderToMetadataFilterName, mustAny(&h2mv3.Config{})))
	}
	if n.lua {
		fs = append(fs, httpFilter(LuaFilterName, mustAny(&luav3.Lua{
			DefaultSourceCode: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: EarlyLua}},
		})))
	}
	if len(n.jwt) > 0 {
		fs = append(fs, httpFilter(JWTFilterName, mustAny(jwtAuthentication(n.jwt))))
	}
	if n.rbac {
		// No rules at the listener: only routes with an RBACPerRoute are enforced.
		fs = append(fs, httpFilter(RBACFilterName, mustAny(&rbacfilterv3.RBAC{})))
	}
	return fs
}

func httpFilter(name string, cfg *anypb.Any) *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{Name: name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: cfg}}
}

// jwtAuthentication holds every provider of the listener's routes and one requirement
// per route, named by its Key, which the route selects in its per-route config.
func jwtAuthentication(routes []*RouteOptions) *jwtv3.JwtAuthentication {
	out := &jwtv3.JwtAuthentication{Providers: map[string]*jwtv3.JwtProvider{}, RequirementMap: map[string]*jwtv3.JwtRequirement{}}
	for _, o := range routes {
		var any []*jwtv3.JwtRequirement
		for _, p := range o.JWT {
			out.Providers[p.Name] = jwtProvider(p)
			any = append(any, &jwtv3.JwtRequirement{RequiresType: &jwtv3.JwtRequirement_ProviderName{ProviderName: p.Name}})
		}
		req := any[0]
		if len(any) > 1 {
			req = &jwtv3.JwtRequirement{RequiresType: &jwtv3.JwtRequirement_RequiresAny{RequiresAny: &jwtv3.JwtRequirementOrList{Requirements: any}}}
		}
		out.RequirementMap[o.Key] = req
	}
	return out
}

func jwtProvider(p *JWTProvider) *jwtv3.JwtProvider {
	out := &jwtv3.JwtProvider{
		Issuer: p.Issuer,
		JwksSourceSpecifier: &jwtv3.JwtProvider_RemoteJwks{RemoteJwks: &jwtv3.RemoteJwks{
			HttpUri: &corev3.HttpUri{
				Uri:              p.JWKSURL,
				HttpUpstreamType: &corev3.HttpUri_Cluster{Cluster: p.JWKSCluster},
				Timeout:          durationpb.New(JWKSFetchTimeout),
			},
			CacheDuration: durationpb.New(JWKSCacheDuration),
			// Fetched when the listener starts, which waits for it (fast_listener
			// false): the first request does not wait for the key set.
			AsyncFetch: &jwtv3.JwksAsyncFetch{},
		}},
		PayloadInMetadata: JWTPayloadKey,
	}
	for _, h := range p.Headers {
		out.FromHeaders = append(out.FromHeaders, &jwtv3.JwtHeader{Name: h.Name, ValuePrefix: h.Prefix})
	}
	for _, c := range p.ClaimsToHeaders {
		out.ClaimToHeaders = append(out.ClaimToHeaders, &jwtv3.JwtClaimToHeader{HeaderName: c.Header, ClaimName: c.Claim})
	}
	return out
}

// extractorPattern is the RE2 pattern and substitution that make header_to_metadata's
// rewrite an extraction: the regex must match the whole value, the result is the whole
// match (subgroup 0) or the group, and a value that does not match becomes empty (the
// second alternative matches it, any byte included, and has no groups), so no metadata
// is set.
func extractorPattern(e *Extractor) (pattern, substitution string) {
	if e.Subgroup == 0 {
		return "^(" + e.Regex + ")$|^(?s:.*)$", `\1`
	}
	return "^(?:" + e.Regex + ")$|^(?s:.*)$", `\` + strconv.Itoa(e.Subgroup)
}

// ExtractorPattern is extractorPattern for callers outside the package (the gateway's
// tests compare its meaning with the documented one).
func ExtractorPattern(regex string, subgroup int) (pattern, substitution string) {
	return extractorPattern(&Extractor{Regex: regex, Subgroup: subgroup})
}

func headerToMetadata(es []*Extractor) *h2mv3.Config {
	out := &h2mv3.Config{}
	for _, e := range es {
		pattern, sub := extractorPattern(e)
		out.RequestRules = append(out.RequestRules, &h2mv3.Config_Rule{
			Header: e.Header,
			OnHeaderPresent: &h2mv3.Config_KeyValuePair{
				MetadataNamespace: TransformationNamespace,
				Key:               e.Key,
				RegexValueRewrite: regexRewrite(pattern, sub),
			},
		})
	}
	return out
}

func regexRewrite(pattern, substitution string) *matcherv3.RegexMatchAndSubstitute {
	return &matcherv3.RegexMatchAndSubstitute{Pattern: &matcherv3.RegexMatcher{Regex: pattern}, Substitution: substitution}
}
