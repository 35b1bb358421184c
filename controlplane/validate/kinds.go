package validate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// applySettings recomputes the Settings in effect and says whether they changed. The
// first Settings resource in namespace/name order applies (its last accepted version
// when it is rejected; the defaults when there is none); any other is a Warning, so
// which one applies never depends on file order.
func (v *Validator) applySettings() bool {
	var all []*entry
	for _, e := range v.aligned {
		if e.res.Kind == apiv1.KindSettings {
			all = append(all, e)
		}
	}
	s := translate.DefaultSettings()
	for n, e := range all {
		if n > 0 {
			e.serving = nil
			e.setStatus(Warning, []string{fmt.Sprintf(
				"metadata.name: not applied: settings %s applies (one Settings resource applies, the first in namespace/name order)", all[0].res.ID())})
			v.invalidate(e)
			continue
		}
		self := settingsOf(&e.self, e.res)
		if self.err == nil {
			s = *self.settings
			v.accept(e, Accepted, nil)
			continue
		}
		var serving *source.Resource
		if last := v.lastVersion(e); last != nil {
			if lt := settingsOf(v.lastTranslation(e), last); lt.err == nil {
				s, serving = *lt.settings, last
			}
		}
		v.reject(e, reasons(self.err), serving)
		if serving == nil {
			e.reasons[len(e.reasons)-1] = "the default settings apply"
		}
	}
	changed := s != v.settings
	v.settings = s
	return changed
}

func settingsOf(t *translation, r *source.Resource) *translation {
	if t.key != r.Hash {
		s, err := translate.SettingsOf(r.Object.(*apiv1.Settings))
		*t = translation{key: r.Hash, settings: &s, err: err}
	}
	return t
}

// secret accepts a Secret (decoding checked its shape); what a Secret must hold is
// checked where it is referenced, since that is where the requirement comes from.
func (v *Validator) secret(e *entry, w work) {
	if e.res.Object.(*apiv1.Secret).Type == apiv1.TLSSecretType {
		v.tlsSecret(e, w)
		return
	}
	id := e.res.ID()
	if old := v.secrets[id]; old == nil || old.Hash != e.res.Hash {
		v.markUsers(userKey(apiv1.KindSecret, id), w)
	}
	v.accept(e, Accepted, nil)
	v.secrets[id] = e.serving
}

// tlsSecret checks a TLS Secret where it is read, since serving it is what it is for:
// a certificate and key that do not parse or do not belong together reject it (its last
// good version keeps serving), an expired one is a Warning. Expiry is checked when the
// Secret is read or changes.
func (v *Validator) tlsSecret(e *entry, w work) {
	id := e.res.ID()
	old, oldServing := e.tls, e.serving
	self := tlsOf(&e.self, e.res)
	if self.err == nil {
		e.tls = self.tls.cert
		state := Accepted
		if len(self.tls.warnings) > 0 {
			state = Warning
		}
		v.accept(e, state, self.tls.warnings)
	} else {
		var serving *source.Resource
		e.tls = nil
		if last := v.lastVersion(e); last != nil {
			if lt := tlsOf(v.lastTranslation(e), last); lt.err == nil {
				e.tls, serving = lt.tls.cert, last
			}
		}
		v.reject(e, reasons(self.err), serving)
	}
	if e.serving == nil {
		delete(v.secrets, id)
	} else {
		v.secrets[id] = e.serving
	}
	if e.tls != old || (oldServing == nil) != (e.serving == nil) {
		v.markUsers(userKey(apiv1.KindSecret, id), w)
	}
}

func tlsOf(t *translation, r *source.Resource) *translation {
	if t.key != r.Hash {
		c, warnings, err := translate.TLSCertOf(r.Object.(*apiv1.Secret), r.Hash, time.Now())
		*t = translation{key: r.Hash, tls: &tlsCert{cert: c, warnings: warnings}, err: err}
	}
	return t
}

func (v *Validator) upstream(e *entry, w work) {
	old := e.cluster
	self := clusterOf(&e.self, e.res)
	if self.err == nil {
		e.cluster = self.cluster
		v.accept(e, Accepted, nil)
	} else {
		var serving *source.Resource
		e.cluster = nil
		if last := v.lastVersion(e); last != nil {
			if lt := clusterOf(v.lastTranslation(e), last); lt.err == nil {
				e.cluster, serving = lt.cluster, last
			}
		}
		v.reject(e, reasons(self.err), serving)
	}
	if e.cluster != old {
		id := e.res.ID()
		if e.cluster == nil {
			delete(v.clusters, id)
		} else {
			v.clusters[id] = e.cluster
		}
		v.markUsers(userKey(apiv1.KindUpstream, id), w)
	}
}

func clusterOf(t *translation, r *source.Resource) *translation {
	if t.key != r.Hash {
		c, err := translate.ClusterOf(r.Object.(*apiv1.Upstream), r.Hash)
		*t = translation{key: r.Hash, cluster: c, err: err}
	}
	return t
}

// authConfig translates an AuthConfig with the Secrets as they are: one whose Secret
// is missing or wrong is Rejected, and its last accepted version serves only if it
// translates with the Secrets as they are now.
func (v *Validator) authConfig(e *entry, w work) {
	old := e.ext
	self := v.authConfigOf(&e.self, e.res)
	refs := secretKeys(e.res, nil)
	if self.err == nil {
		e.ext = self.ext
		v.accept(e, Accepted, nil)
	} else {
		var serving *source.Resource
		e.ext = nil
		if last := v.lastVersion(e); last != nil {
			refs = secretKeys(last, refs)
			if lt := v.authConfigOf(v.lastTranslation(e), last); lt.err == nil {
				e.ext, serving = lt.ext, last
			}
		}
		v.reject(e, reasons(self.err), serving)
	}
	v.index(e, refs)
	if e.ext != old {
		id := e.res.ID()
		if e.ext == nil {
			delete(v.acs, id)
		} else {
			v.acs[id] = true
		}
		v.markUsers(userKey(apiv1.KindAuthConfig, id), w)
	}
}

func secretKeys(r *source.Resource, to []string) []string {
	for _, id := range translate.SecretRefs(r.Object.(*apiv1.AuthConfig)) {
		if k := userKey(apiv1.KindSecret, id); !slices.Contains(to, k) {
			to = append(to, k)
		}
	}
	return to
}

// authConfigOf translates r, again only when r or a Secret it references changed, or
// the timeout did.
func (v *Validator) authConfigOf(t *translation, r *source.Resource) *translation {
	var key strings.Builder
	key.WriteString(r.Hash + "|" + v.settings.RequestTimeout.String())
	for _, id := range translate.SecretRefs(r.Object.(*apiv1.AuthConfig)) {
		key.WriteString("|")
		if s := v.secrets[id]; s != nil {
			key.WriteString(s.Hash)
		}
	}
	if t.key != key.String() {
		cfg, err := translate.AuthConfig(r.Object.(*apiv1.AuthConfig), func(id string) *apiv1.Secret {
			if s := v.secrets[id]; s != nil {
				return s.Object.(*apiv1.Secret)
			}
			return nil
		}, v.settings.RequestTimeout)
		*t = translation{key: key.String(), ext: cfg, err: err}
	}
	return t
}
