package translate

import (
	"fmt"
	"time"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/internal/envoysds"
)

// DefaultExtauthzServer is the Upstream of the extauth server when Settings name none.
const DefaultExtauthzServer = "gatehouse-system.extauth"

// Settings are what the Settings resource changes in the translation.
type Settings struct {
	// From is the id of the Settings resource applied; "" for the defaults.
	From string `json:"from,omitempty"`
	// RequestTimeout bounds one check, in the ext_authz filter and in extauth.
	RequestTimeout time.Duration `json:"requestTimeout"`
	// ExtauthzServer is the id of the Upstream of the extauth server.
	ExtauthzServer string `json:"extauthzServer"`
	// ExtauthTLSSDSDir, when set, is the folder of the SDS files on every gateway proxy
	// (spec.extauth.tls.sdsDir): the proxies reach the extauth server over mutual TLS.
	ExtauthTLSSDSDir string `json:"extauthTlsSdsDir,omitempty"`
	// DevMode enables the deprecated debug endpoint.
	DevMode bool `json:"devMode"`
	// Tracing, when set, has the gateway proxies trace requests (spec.tracing).
	Tracing *Tracing `json:"tracing,omitempty"`
	// VirtualHostDiscovery serves the plain-text listeners' virtual hosts over VHDS
	// (spec.virtualHostDiscovery).
	VirtualHostDiscovery bool `json:"virtualHostDiscovery,omitempty"`
}

// DefaultSettings apply when no Settings resource is accepted.
func DefaultSettings() Settings {
	return Settings{RequestTimeout: DefaultRequestTimeout, ExtauthzServer: DefaultExtauthzServer}
}

// SettingsOf translates a Settings resource, with every problem of it.
func SettingsOf(s *apiv1.Settings) (Settings, error) {
	out := DefaultSettings()
	out.From, out.DevMode, out.VirtualHostDiscovery = s.Metadata.ID(), s.Spec.DevMode, s.Spec.VirtualHostDiscovery
	var errs fieldErrors
	if e := s.Spec.Extauth; e != nil {
		if e.RequestTimeout != "" {
			d, err := time.ParseDuration(e.RequestTimeout)
			if err != nil || d <= 0 {
				errs.addf("spec.extauth.requestTimeout", "%q is not a positive duration such as \"1s\"", e.RequestTimeout)
			} else {
				out.RequestTimeout = d
			}
		}
		if r := e.ExtauthzServerRef; r != nil {
			if r.Name == "" {
				errs.add("spec.extauth.extauthzServerRef.name", "is required")
			} else {
				out.ExtauthzServer = r.ID(s.Metadata.Namespace)
			}
		}
		if t := e.TLS; t != nil {
			if err := envoysds.CheckDir(t.SDSDir); err != nil {
				errs.addf("spec.extauth.tls.sdsDir", "%v", err)
			} else {
				out.ExtauthTLSSDSDir = t.SDSDir
			}
		}
	}
	if t := s.Spec.Tracing; t != nil {
		out.Tracing = tracingOf(t, &errs)
	}
	if err := errs.err("settings " + s.Metadata.ID()); err != nil {
		return DefaultSettings(), err
	}
	return out, nil
}

// String is a one-line summary for logs.
func (s Settings) String() string {
	out := fmt.Sprintf("requestTimeout=%s extauthzServer=%s extauthTlsSdsDir=%q devMode=%t", s.RequestTimeout, s.ExtauthzServer, s.ExtauthTLSSDSDir, s.DevMode)
	if t := s.Tracing; t != nil {
		out += fmt.Sprintf(" tracing=%s:%d@%g%%", t.Collector.Addr, t.Collector.Port, t.SamplePercent)
	}
	if s.VirtualHostDiscovery {
		out += " virtualHostDiscovery=true"
	}
	return out
}
