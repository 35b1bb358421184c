package validate

import (
	"fmt"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// settings applies the first Settings resource in namespace/name order (its last
// accepted version when it is rejected; the defaults when there is none); any other
// is a Warning, so which one applies never depends on file order.
func (r *run) settings(idx []int) {
	r.out.Accepted.Settings = translate.DefaultSettings()
	for n, i := range idx {
		res := &r.out.Resources[i]
		if n > 0 {
			applied := r.in.Resources[idx[0]].ID()
			res.Statuses = []Status{{State: Warning, ReportedBy: ReportedBy, Reasons: []string{
				fmt.Sprintf("metadata.name: not applied: settings %s applies (one Settings resource applies, the first in namespace/name order)", applied)}}}
			continue
		}
		s, err := r.cache.Settings(&res.Resource)
		if err == nil {
			r.out.Accepted.Settings = s
			r.accept(i, Accepted, nil)
			continue
		}
		last := r.lastAccepted(i)
		if last != nil {
			if s, err := r.cache.Settings(last); err == nil {
				r.out.Accepted.Settings = s
			} else {
				last = nil
			}
		}
		note := "the default settings apply"
		r.reject(i, reasons(err), last, note)
	}
}

// secrets accepts every Secret (decoding checked its shape); what a Secret must hold
// is checked where it is referenced, since that is where the requirement comes from.
func (r *run) secrets(idx []int) {
	for _, i := range idx {
		r.accept(i, Accepted, nil)
		res := &r.out.Resources[i]
		r.out.secrets[res.ID()] = &res.Resource
	}
}

func (r *run) upstreams(idx []int) {
	for _, i := range idx {
		res := &r.out.Resources[i]
		c, err := r.cache.Cluster(&res.Resource)
		if err == nil {
			r.clusters[res.ID()] = c
			r.out.Accepted.Clusters = append(r.out.Accepted.Clusters, c)
			r.accept(i, Accepted, nil)
			continue
		}
		last := r.lastAccepted(i)
		if last != nil {
			if c, lerr := r.cache.Cluster(last); lerr == nil {
				r.clusters[res.ID()] = c
				r.out.Accepted.Clusters = append(r.out.Accepted.Clusters, c)
			} else {
				last = nil
			}
		}
		r.reject(i, reasons(err), last, r.missingNote(i))
	}
}

// authConfigs translates each AuthConfig with the serving Secrets: an AuthConfig whose
// Secret is missing or wrong is Rejected, and its last accepted version serves only if
// it translates with the Secrets as they are now.
func (r *run) authConfigs(idx []int) {
	timeout := r.out.Accepted.Settings.RequestTimeout
	lookup := func(id string) *source.Resource { return r.out.secrets[id] }
	for _, i := range idx {
		res := &r.out.Resources[i]
		_, err := r.cache.AuthConfig(&res.Resource, lookup, timeout)
		if err == nil {
			r.acs[res.ID()] = true
			r.out.AuthConfigs = append(r.out.AuthConfigs, res.Resource)
			r.accept(i, Accepted, nil)
			continue
		}
		last := r.lastAccepted(i)
		if last != nil {
			if _, lerr := r.cache.AuthConfig(last, lookup, timeout); lerr == nil {
				r.acs[res.ID()] = true
				r.out.AuthConfigs = append(r.out.AuthConfigs, *last)
			} else {
				last = nil
			}
		}
		r.reject(i, reasons(err), last, r.missingNote(i))
	}
}

// refProblems checks the references of a virtual host against what serves.
func (r *run) refProblems(vh *translate.VirtualHost) []string {
	var out []string
	missing := func(ref translate.Ref, kind string) string {
		if r.inInput[ref.Kind][ref.ID] {
			return fmt.Sprintf("%s: %s %s is rejected", ref.Path, kind, ref.ID)
		}
		return fmt.Sprintf("%s: %s %s does not exist", ref.Path, kind, ref.ID)
	}
	for _, ref := range vh.Refs {
		switch ref.Kind {
		case apiv1.KindUpstream:
			if r.clusters[ref.ID] == nil {
				out = append(out, missing(ref, "upstream"))
			}
		case apiv1.KindAuthConfig:
			if !r.acs[ref.ID] {
				out = append(out, missing(ref, "authconfig"))
			}
		case apiv1.KindSecret:
			switch s := r.out.secrets[ref.ID]; {
			case s == nil:
				out = append(out, missing(ref, "secret"))
			case s.Object.(*apiv1.Secret).Type != ref.SecretType:
				out = append(out, fmt.Sprintf("%s: secret %s has type %q; want %q", ref.Path, ref.ID, s.Object.(*apiv1.Secret).Type, ref.SecretType))
			}
		}
	}
	ext := r.out.Accepted.Settings.ExtauthzServer
	if r.clusters[ext] != nil {
		return out
	}
	for _, rt := range vh.Routes {
		if rt.AuthConfig != "" {
			out = append(out, fmt.Sprintf("%s.options.extauth.configRef: the extauth server's upstream %s (Settings spec.extauth.extauthzServerRef) does not exist; secured routes are not served open",
				routePath(rt.Name), ext))
			break
		}
	}
	return out
}

// routePath is the route's field path from its matcher's ("...routes[0].matchers[1]").
func routePath(matcher string) string {
	for i := len(matcher) - 1; i >= 0; i-- {
		if matcher[i] == '.' {
			return matcher[:i]
		}
	}
	return matcher
}
