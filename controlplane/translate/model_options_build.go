package translate

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// maxSubgroup is the highest capture group an extractor may take: Envoy's regex
// substitution names groups \0 to \9, and group 0 is taken by the whole match.
const maxSubgroup = 8

// modelRouteOptions translates jwt, rbac and stagedTransformations of one route; nil
// when it has none of them.
func modelRouteOptions(vh *VirtualHost, ns string, o *apiv1.RouteOptions, key, path string, errs *fieldErrors) *RouteOptions {
	if o.JWT == nil && o.RBAC == nil && o.StagedTransformations == nil {
		return nil
	}
	ro := &RouteOptions{Key: key}
	if o.JWT != nil {
		modelJWT(vh, ns, ro, o.JWT, path+".jwt", errs)
	}
	if o.RBAC != nil {
		if o.JWT == nil {
			errs.add(path+".rbac", "needs jwt on the same route: its principals match verified JWT claims")
		}
		modelRBAC(ro, o.RBAC, path+".rbac", errs)
	}
	if st := o.StagedTransformations; st != nil {
		if st.Early == nil {
			errs.add(path+".stagedTransformations.early", "is required (the only stage supported)")
		} else {
			modelTransforms(ro, st.Early, path+".stagedTransformations.early", errs)
		}
	}
	for _, h := range ro.Headers {
		if slices.Contains(ro.ClaimHeaders, h.Name) {
			errs.addf(path+".stagedTransformations", "sets %s, which a JWT claim sets: only a verified claim may", h.Name)
		}
	}
	return ro
}

func modelJWT(vh *VirtualHost, ns string, ro *RouteOptions, j *apiv1.JWTOption, path string, errs *fieldErrors) {
	if len(j.Providers) == 0 {
		errs.add(path+".providers", "at least one provider is required")
	}
	for _, name := range sortedKeys(j.Providers) {
		p, pp := j.Providers[name], path+".providers."+name
		mp := &JWTProvider{Name: ro.Key + "/" + name, Issuer: p.Issuer}
		if p.TokenSource == nil || len(p.TokenSource.Headers) == 0 {
			mp.Headers = []TokenHeader{{Name: "authorization", Prefix: "Bearer "}}
		} else {
			for i, h := range p.TokenSource.Headers {
				if !validHeaderName(h.Header) || strings.HasPrefix(h.Header, ":") {
					errs.addf(fmt.Sprintf("%s.tokenSource.headers[%d].header", pp, i), "%q is not a header name", h.Header)
				}
				mp.Headers = append(mp.Headers, TokenHeader{Name: strings.ToLower(h.Header), Prefix: h.Prefix})
			}
		}
		for i, c := range p.ClaimsToHeaders {
			cp := fmt.Sprintf("%s.claimsToHeaders[%d]", pp, i)
			if c.Claim == "" {
				errs.add(cp+".claim", "is required")
			}
			if !validHeaderName(c.Header) || strings.HasPrefix(c.Header, ":") {
				errs.addf(cp+".header", "%q is not a header name", c.Header)
				continue
			}
			h := strings.ToLower(c.Header)
			mp.ClaimsToHeaders = append(mp.ClaimsToHeaders, ClaimToHeader{Claim: c.Claim, Header: h})
			if !slices.Contains(ro.ClaimHeaders, h) {
				ro.ClaimHeaders = append(ro.ClaimHeaders, h)
			}
		}
		switch {
		case p.JWKS == nil || p.JWKS.Remote == nil:
			errs.add(pp+".jwks.remote", "is required (keys are fetched from a remote key set)")
		default:
			r := p.JWKS.Remote
			if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs.addf(pp+".jwks.remote.url", "%q is not an http(s) URL", r.URL)
			}
			mp.JWKSURL = r.URL
			if r.UpstreamRef.Name == "" {
				errs.add(pp+".jwks.remote.upstreamRef.name", "is required")
			} else {
				mp.JWKSCluster = ClusterName(r.UpstreamRef.ID(ns))
			}
		}
		ro.JWT = append(ro.JWT, mp)
	}
	slices.Sort(ro.ClaimHeaders)
}

var methodName = regexp.MustCompile(`^[A-Z]+$`)

func modelRBAC(ro *RouteOptions, r *apiv1.RBACOption, path string, errs *fieldErrors) {
	ro.RBAC = []*RBACPolicy{} // rbac set: a request matching no policy is denied
	for _, name := range sortedKeys(r.Policies) {
		p, pp := r.Policies[name], path+".policies."+name
		mp := &RBACPolicy{Name: name}
		if len(p.Principals) == 0 {
			errs.add(pp+".principals", "at least one principal is required")
		}
		for i, pr := range p.Principals {
			if len(pr.JWTPrincipal.Claims) == 0 {
				errs.add(fmt.Sprintf("%s.principals[%d].jwtPrincipal.claims", pp, i), "at least one claim is required")
			}
			mp.Principals = append(mp.Principals, pr.JWTPrincipal.Claims)
		}
		if perm := p.Permissions; perm != nil {
			if perm.PathPrefix != "" && perm.PathPrefix[0] != '/' {
				errs.addf(pp+".permissions.pathPrefix", "%q must start with \"/\"", perm.PathPrefix)
			}
			mp.PathPrefix = perm.PathPrefix
			for i, m := range perm.Methods {
				if !methodName.MatchString(m) {
					errs.addf(fmt.Sprintf("%s.permissions.methods[%d]", pp, i), "%q is not an HTTP method (upper case)", m)
				}
			}
			mp.Methods = perm.Methods
		}
		ro.RBAC = append(ro.RBAC, mp)
	}
}

func modelTransforms(ro *RouteOptions, st *apiv1.TransformationStage, path string, errs *fieldErrors) {
	for i, rt := range st.RequestTransforms {
		tp := fmt.Sprintf("%s.requestTransforms[%d].requestTransformation.transformationTemplate", path, i)
		tt := rt.RequestTransformation.TransformationTemplate
		if tt == nil {
			errs.add(tp, "is required")
			continue
		}
		prefix := strconv.Itoa(i) + "."
		for _, name := range sortedKeys(tt.Extractors) {
			e, ep := tt.Extractors[name], tp+".extractors."+name
			if !isIdentifier(name) {
				errs.addf(ep, "%q is not an extractor name (letters, digits, \"_\"; not starting with a digit)", name)
			}
			if !validHeaderName(e.Header) {
				errs.addf(ep+".header", "%q is not a header name", e.Header)
			}
			re, err := regexp.Compile(e.Regex)
			switch {
			case err != nil:
				errs.addf(ep+".regex", "not a valid RE2 regular expression: %v", err)
			case e.Subgroup < 0 || e.Subgroup > re.NumSubexp():
				errs.addf(ep+".subgroup", "%d: the regex has %d capture groups", e.Subgroup, re.NumSubexp())
			case e.Subgroup > maxSubgroup:
				errs.addf(ep+".subgroup", "%d: at most %d is supported", e.Subgroup, maxSubgroup)
			}
			ro.Extractors = append(ro.Extractors, &Extractor{Key: prefix + name, Header: strings.ToLower(e.Header), Regex: e.Regex, Subgroup: e.Subgroup})
		}
		known := func(n string) bool { _, ok := tt.Extractors[n]; return ok }
		key := func(n string) string { return prefix + n }
		for _, h := range sortedKeys(tt.Headers) {
			hp := tp + ".headers." + h
			if !validHeaderName(h) || strings.HasPrefix(h, ":") {
				errs.addf(hp, "%q is not a header name", h)
				continue
			}
			parts, err := ParseTemplate(tt.Headers[h].Text, known, key)
			if err != nil {
				errs.addf(hp+".text", "%v", err)
				continue
			}
			ro.Headers = append(ro.Headers, &HeaderTemplate{Name: strings.ToLower(h), Parts: parts})
		}
	}
}
