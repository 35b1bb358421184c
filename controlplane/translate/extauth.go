// Package translate turns declarative resources into what the data plane consumes: the
// extauth server's ExtAuthConfig and Envoy's listeners, routes and clusters. Every
// function here is pure: resources in, messages and field-path errors out.
package translate

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/api/resource"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// DefaultRequestTimeout bounds one Check when Settings name no spec.extauth.requestTimeout.
const DefaultRequestTimeout = 200 * time.Millisecond

// AuthConfigResult is the translation of one AuthConfig: Config when it is valid, Err
// (every problem, with field paths) when it is not.
type AuthConfigResult struct {
	ID     string
	Config *extauthv1.ExtAuthConfig
	Err    error
}

// ExtAuth translates every AuthConfig of set, resolving secret references against set.
func ExtAuth(set *apiv1.Set) []AuthConfigResult {
	timeout, terr := RequestTimeout(set)
	out := make([]AuthConfigResult, 0, len(set.AuthConfigs))
	for _, ac := range set.AuthConfigs {
		cfg, err := AuthConfig(ac, set.Secret, timeout)
		out = append(out, AuthConfigResult{ID: ac.Metadata.ID(), Config: cfg, Err: errors.Join(err, terr)})
	}
	return out
}

// RequestTimeout is Settings spec.extauth.requestTimeout, or DefaultRequestTimeout.
func RequestTimeout(set *apiv1.Set) (time.Duration, error) {
	for _, s := range set.Settings {
		if s.Spec.Extauth == nil || s.Spec.Extauth.RequestTimeout == "" {
			continue
		}
		d, err := time.ParseDuration(s.Spec.Extauth.RequestTimeout)
		if err != nil || d <= 0 {
			return DefaultRequestTimeout, fmt.Errorf("settings %s: spec.extauth.requestTimeout: %q is not a positive duration such as \"1s\"",
				s.Metadata.ID(), s.Spec.Extauth.RequestTimeout)
		}
		return d, nil
	}
	return DefaultRequestTimeout, nil
}

// SecretLookup returns the Secret with the given id ("<namespace>.<name>"), or nil.
type SecretLookup func(id string) *apiv1.Secret

// AuthConfig translates one AuthConfig into the ExtAuthConfig extauth serves, resolving
// its Secrets through secrets, with every problem of it (field paths) as the error.
func AuthConfig(ac *apiv1.AuthConfig, secrets SecretLookup, timeout time.Duration) (*extauthv1.ExtAuthConfig, error) {
	cfg := &extauthv1.ExtAuthConfig{ConfigId: ac.Metadata.ID(), RequestTimeout: durationpb.New(timeout)}
	var errs fieldErrors
	if len(ac.Spec.Configs) == 0 {
		errs.add("spec.configs", "at least one step is required")
	}
	for i, st := range ac.Spec.Configs {
		path := fmt.Sprintf("spec.configs[%d]", i)
		switch {
		case st.PluginAuth != nil && st.OAuth2 != nil:
			errs.add(path, "holds both pluginAuth and oauth2; a step holds exactly one")
		case st.PluginAuth != nil:
			if step := pluginStep(st.PluginAuth, path+".pluginAuth", &errs); step != nil {
				cfg.Steps = append(cfg.Steps, step)
			}
		case st.OAuth2 != nil:
			if step := oauth2Step(secrets, ac, st.OAuth2, path+".oauth2", &errs); step != nil {
				cfg.Steps = append(cfg.Steps, step)
			}
		default:
			errs.add(path, "is empty; set pluginAuth or oauth2")
		}
	}
	if dl := ac.Spec.DecisionLog; dl != nil && dl.SampleRatio != nil {
		if r := *dl.SampleRatio; r >= 0 && r <= 1 {
			cfg.DecisionLogSampleRatio = &r
		} else {
			errs.add("spec.decisionLog.sampleRatio", fmt.Sprintf("%g is not a share from 0 to 1", r))
		}
	}
	if err := errs.err("authconfig " + ac.Metadata.ID()); err != nil {
		return nil, err
	}
	return cfg, nil
}

func pluginStep(p *apiv1.PluginAuth, path string, errs *fieldErrors) *extauthv1.Step {
	if p.Name == "" {
		errs.add(path+".name", "is required")
		return nil
	}
	var conf *structpb.Struct
	if len(p.Config) > 0 && string(p.Config) != "null" {
		var m map[string]any
		if err := json.Unmarshal(p.Config, &m); err != nil {
			errs.add(path+".config", "must be an object")
			return nil
		}
		s, err := structpb.NewStruct(m)
		if err != nil {
			errs.add(path+".config", err.Error())
			return nil
		}
		conf = s
	}
	namesOK := pluginNames(p, path, errs)
	pa := &extauthv1.PluginAuth{
		Name:               p.Name,
		PluginFileName:     p.FileName(),
		ExportedSymbolName: p.SymbolName(),
		Config:             conf,
	}
	if !isolation(p, path, pa, errs) || !namesOK {
		return nil
	}
	return &extauthv1.Step{Kind: &extauthv1.Step_PluginAuth{PluginAuth: pa}}
}

// pluginNames checks what extauth would refuse of a step's plugin file and symbol: a
// file name that is not a plain name inside the plugin folder, and a symbol Go can
// never export. Both are reported here, so their AuthConfig is Rejected by the control
// plane rather than served and then NACKed by every extauth replica.
func pluginNames(p *apiv1.PluginAuth, path string, errs *fieldErrors) bool {
	ok := true
	if f := p.FileName(); f != filepath.Base(f) || f == "." || f == ".." || strings.ContainsAny(f, "/\\\x00") {
		errs.add(path+".pluginFileName", fmt.Sprintf("%q must be a plain file name inside the plugin folder (such as %s.so), not a path", f, p.Name))
		ok = false
	}
	if sym := p.SymbolName(); !exportable(sym) {
		field, why := path+".exportedSymbolName", fmt.Sprintf("%q is not a name Go can export from a plugin (an identifier that starts with an upper-case letter)", sym)
		if p.ExportedSymbolName == "" {
			why = fmt.Sprintf("is unset, so it defaults to the step's name %q, which Go can never export; set it to the variable the plugin exports, such as Plugin", p.Name)
		}
		errs.add(field, why)
		ok = false
	}
	return ok
}

// exportable says whether name is an identifier Go exports.
func exportable(name string) bool {
	for i, r := range name {
		switch {
		case i == 0 && !unicode.IsUpper(r):
			return false
		case !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_':
			return false
		}
	}
	return name != ""
}

// isolation checks and copies isolation and memoryLimit into pa.
func isolation(p *apiv1.PluginAuth, path string, pa *extauthv1.PluginAuth, errs *fieldErrors) bool {
	switch p.Isolation {
	case "", apiv1.IsolationInProcess:
	case apiv1.IsolationProcess:
		pa.Isolation = apiv1.IsolationProcess
	default:
		errs.add(path+".isolation", fmt.Sprintf("%q is not one of %q, %q", p.Isolation, apiv1.IsolationInProcess, apiv1.IsolationProcess))
		return false
	}
	if p.MemoryLimit == "" {
		return true
	}
	if pa.Isolation != apiv1.IsolationProcess {
		errs.add(path+".memoryLimit", "applies only with isolation: process (a plugin in the server's process cannot be capped)")
		return false
	}
	q, err := resource.ParseQuantity(p.MemoryLimit)
	if err != nil || q.Value() <= 0 {
		errs.add(path+".memoryLimit", fmt.Sprintf("%q is not a positive quantity such as \"256Mi\"", p.MemoryLimit))
		return false
	}
	pa.MemoryLimitBytes = q.Value()
	return true
}

// SecretRefs are the ids of the Secrets an AuthConfig references, in field order.
func SecretRefs(ac *apiv1.AuthConfig) []string {
	var out []string
	ns := ac.Metadata.Namespace
	for _, st := range ac.Spec.Configs {
		if st.OAuth2 == nil || st.OAuth2.OIDCAuthorizationCode == nil {
			continue
		}
		c := st.OAuth2.OIDCAuthorizationCode
		if c.ClientSecretRef != nil && c.ClientSecretRef.Name != "" {
			out = append(out, c.ClientSecretRef.ID(ns))
		}
		if c.Session != nil && c.Session.CookieEncryptionRef != nil {
			out = append(out, c.Session.CookieEncryptionRef.ID(ns))
		}
	}
	return out
}
