package validate

import (
	"fmt"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// refProblems checks the references of a virtual host against what serves.
func (v *Validator) refProblems(vh *translate.VirtualHost) []string {
	var out []string
	for _, ref := range vh.Refs {
		switch ref.Kind {
		case apiv1.KindUpstream:
			if v.clusters[ref.ID] == nil {
				out = append(out, v.missing(ref, "upstream"))
			}
		case apiv1.KindAuthConfig:
			// Not a problem of the VirtualService: see authWarnings.
		case apiv1.KindSecret:
			switch s := v.secrets[ref.ID]; {
			case s == nil:
				out = append(out, v.missing(ref, "secret"))
			case s.Object.(*apiv1.Secret).Type != ref.SecretType:
				out = append(out, fmt.Sprintf("%s: secret %s has type %q; want %q", ref.Path, ref.ID, s.Object.(*apiv1.Secret).Type, ref.SecretType))
			}
		}
	}
	if ext := v.settings.ExtauthzServer; v.clusters[ext] == nil {
		if rt := securedRoute(vh); rt != nil {
			out = append(out, fmt.Sprintf("%s.options.extauth.configRef: the extauth server's upstream %s (Settings spec.extauth.extauthzServerRef) does not exist; secured routes are not served open",
				routePath(rt.Name), ext))
		}
	}
	return out
}

// authWarnings are the routes of vh whose AuthConfig does not serve. They are served
// all the same, and extauth denies their requests (403: no config serves under their
// config_id), so an AuthConfig removed or never accepted closes the routes it secures
// and leaves the open routes of the VirtualService serving, rather than withdrawing it.
func (v *Validator) authWarnings(vh *translate.VirtualHost) []string {
	var out []string
	for _, ref := range vh.Refs {
		if ref.Kind == apiv1.KindAuthConfig && !v.acs[ref.ID] {
			out = append(out, v.missing(ref, "authconfig")+"; extauth denies this route's requests (403) until it serves")
		}
	}
	return out
}

// missing says a referenced resource does not serve: rejected, or not there at all.
func (v *Validator) missing(ref translate.Ref, kind string) string {
	if v.inInput(ref) {
		return fmt.Sprintf("%s: %s %s is rejected", ref.Path, kind, ref.ID)
	}
	return fmt.Sprintf("%s: %s %s does not exist", ref.Path, kind, ref.ID)
}

func (v *Validator) inInput(ref translate.Ref) bool {
	apiVersion := apiv1.CoreAPIVersion
	switch ref.Kind {
	case apiv1.KindAuthConfig:
		apiVersion = apiv1.AuthConfigAPIVersion
	case apiv1.KindSecret:
		apiVersion = apiv1.SecretAPIVersion
	}
	for i := range len(ref.ID) {
		if ref.ID[i] == '.' {
			_, ok := v.prev.Get(source.Key{APIVersion: apiVersion, Kind: ref.Kind, Namespace: ref.ID[:i], Name: ref.ID[i+1:]})
			return ok
		}
	}
	return false
}

// refKeys adds the user keys of what vh references to to: its refs, and the extauth
// server's Upstream when it has a secured route.
func (v *Validator) refKeys(vh *translate.VirtualHost, to []string) []string {
	add := func(k string) {
		for _, have := range to {
			if have == k {
				return
			}
		}
		to = append(to, k)
	}
	for _, ref := range vh.Refs {
		add(userKey(ref.Kind, ref.ID))
	}
	if securedRoute(vh) != nil {
		add(userKey(apiv1.KindUpstream, v.settings.ExtauthzServer))
	}
	return to
}

func securedRoute(vh *translate.VirtualHost) *translate.Route {
	for _, rt := range vh.Routes {
		if rt.AuthConfig != "" {
			return rt
		}
	}
	return nil
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
