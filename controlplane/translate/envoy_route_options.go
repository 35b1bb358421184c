package translate

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	jwtv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// routeOptions adds what a route's options mean to its Envoy route: per-route config
// of header_to_metadata, jwt_authn and rbac, and the Lua stage's data as route
// metadata. Built once per RouteOptions and shared by the routes of its matchers.
type envoyRouteOptions struct {
	perFilter map[string]*anypb.Any
	metadata  *corev3.Metadata
}

func buildRouteOptions(o *RouteOptions) *envoyRouteOptions {
	out := &envoyRouteOptions{perFilter: map[string]*anypb.Any{}}
	if len(o.Extractors) > 0 {
		out.perFilter[HeaderToMetadataFilterName] = mustAny(headerToMetadata(o.Extractors))
	}
	if len(o.JWT) > 0 {
		out.perFilter[JWTFilterName] = mustAny(&jwtv3.PerRouteConfig{RequirementSpecifier: &jwtv3.PerRouteConfig_RequirementName{RequirementName: o.Key}})
	}
	if o.RBAC != nil {
		out.perFilter[RBACFilterName] = mustAny(rbacPerRoute(o.RBAC))
	}
	if len(o.Headers) > 0 || len(o.ClaimHeaders) > 0 {
		out.metadata = &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{LuaFilterName: luaData(o)}}
	}
	return out
}

// luaData is the data the fixed Lua script reads: strings only, in lists and maps.
func luaData(o *RouteOptions) *structpb.Struct {
	cfg := map[string]any{}
	if len(o.ClaimHeaders) > 0 {
		remove := make([]any, len(o.ClaimHeaders))
		for i, h := range o.ClaimHeaders {
			remove[i] = h
		}
		cfg["remove"] = remove
	}
	if len(o.Headers) > 0 {
		var headers []any
		for _, h := range o.Headers {
			parts := make([]any, 0, len(h.Parts))
			for _, p := range h.Parts {
				if p.Value != "" {
					parts = append(parts, map[string]any{"value": p.Value})
				} else {
					parts = append(parts, map[string]any{"text": p.Text})
				}
			}
			headers = append(headers, map[string]any{"name": h.Name, "parts": parts})
		}
		cfg["headers"] = headers
	}
	s, err := structpb.NewStruct(map[string]any{LuaMetadataKey: cfg})
	if err != nil {
		panic("translate: lua data: " + err.Error()) // strings, lists and maps always convert
	}
	return s
}

// rbacPerRoute allows a request one policy matches; a principal matches when every
// claim it names equals its value in the verified JWT payload jwt_authn left in its
// metadata. Anything else is denied with 403 "RBAC: access denied".
func rbacPerRoute(ps []*RBACPolicy) *rbacfilterv3.RBACPerRoute {
	rules := &rbacv3.RBAC{Action: rbacv3.RBAC_ALLOW, Policies: map[string]*rbacv3.Policy{}}
	for _, p := range ps {
		pol := &rbacv3.Policy{Permissions: []*rbacv3.Permission{permission(p)}}
		for _, claims := range p.Principals {
			var ids []*rbacv3.Principal
			for _, c := range sortedKeys(claims) {
				ids = append(ids, &rbacv3.Principal{Identifier: &rbacv3.Principal_Metadata{Metadata: &matcherv3.MetadataMatcher{
					Filter: JWTFilterName,
					Path: []*matcherv3.MetadataMatcher_PathSegment{
						{Segment: &matcherv3.MetadataMatcher_PathSegment_Key{Key: JWTPayloadKey}},
						{Segment: &matcherv3.MetadataMatcher_PathSegment_Key{Key: c}},
					},
					Value: &matcherv3.ValueMatcher{MatchPattern: &matcherv3.ValueMatcher_StringMatch{StringMatch: exact(claims[c])}},
				}}})
			}
			pol.Principals = append(pol.Principals, &rbacv3.Principal{Identifier: &rbacv3.Principal_AndIds{AndIds: &rbacv3.Principal_Set{Ids: ids}}})
		}
		rules.Policies[p.Name] = pol
	}
	return &rbacfilterv3.RBACPerRoute{Rbac: &rbacfilterv3.RBAC{Rules: rules}}
}

func permission(p *RBACPolicy) *rbacv3.Permission {
	var and []*rbacv3.Permission
	if p.PathPrefix != "" {
		and = append(and, &rbacv3.Permission{Rule: &rbacv3.Permission_UrlPath{UrlPath: &matcherv3.PathMatcher{
			Rule: &matcherv3.PathMatcher_Path{Path: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: p.PathPrefix}}},
		}}})
	}
	if len(p.Methods) > 0 {
		var or []*rbacv3.Permission
		for _, m := range p.Methods {
			or = append(or, &rbacv3.Permission{Rule: &rbacv3.Permission_Header{Header: &routev3.HeaderMatcher{
				Name: ":method", HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: exact(m)},
			}}})
		}
		and = append(and, &rbacv3.Permission{Rule: &rbacv3.Permission_OrRules{OrRules: &rbacv3.Permission_Set{Rules: or}}})
	}
	if len(and) == 0 {
		return &rbacv3.Permission{Rule: &rbacv3.Permission_Any{Any: true}}
	}
	return &rbacv3.Permission{Rule: &rbacv3.Permission_AndRules{AndRules: &rbacv3.Permission_Set{Rules: and}}}
}

func exact(v string) *matcherv3.StringMatcher {
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: v}}
}
