// Package listing builds the tables of `gatehouse get` from the control plane's edge
// snapshot: one row per resource, with its state and what an operator looks at first.
package listing

import (
	"encoding/json"
	"fmt"
	"strings"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/validate"
)

// Resource is one resource of the edge snapshot as the CLI decodes it: its object stays
// JSON until a table needs it.
type Resource struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Namespace  string            `json:"namespace"`
	Name       string            `json:"name"`
	Origin     string            `json:"origin,omitempty"`
	Object     json.RawMessage   `json:"object"`
	Statuses   []validate.Status `json:"statuses"`
	Serving    string            `json:"serving,omitempty"`
	// DataPlane is how far it reached the clients ("extauth 2/2", "proxies 1/1"); ""
	// when the source cannot tell (a Kubernetes status written by an older release).
	DataPlane string `json:"dataPlane,omitempty"`
}

// dataPlane is r.DataPlane, or "-" when unknown.
func (r *Resource) dataPlane() string {
	if r.DataPlane == "" {
		return "-"
	}
	return r.DataPlane
}

// ID is "<namespace>.<name>".
func (r *Resource) ID() string { return r.Namespace + "." + r.Name }

// Pending is the state of a resource read from Kubernetes whose current generation its
// control plane has not reported on yet.
const Pending validate.State = "Pending"

// State is the worst state of r's statuses, or Pending.
func (r *Resource) State() validate.State {
	if len(r.Statuses) == 0 {
		return Pending
	}
	for _, s := range r.Statuses {
		if s.State == Pending {
			return Pending
		}
	}
	v := validate.Resource{Statuses: r.Statuses}
	return v.State()
}

// Edge is the data of /snapshots/edge as the CLI decodes it.
type Edge struct {
	Resources map[string][]Resource `json:"resources"`
}

// Table is a header and its rows.
type Table struct {
	Header []string
	Rows   [][]string
}

// Select returns the resources of kind, all or only those whose name or id is name.
func (e *Edge) Select(kind, name string) []Resource {
	var out []Resource
	for _, r := range e.Resources[kind] {
		if name == "" || r.Name == name || r.ID() == name {
			out = append(out, r)
		}
	}
	return out
}

// Upstreams is UPSTREAM | TYPE | STATUS | DETAILS (static: hosts; discovered: service,
// namespace, port).
func Upstreams(rs []Resource) (Table, error) {
	t := Table{Header: []string{"UPSTREAM", "TYPE", "STATUS", "DETAILS"}}
	for _, r := range rs {
		var u apiv1.Upstream
		if err := json.Unmarshal(r.Object, &u); err != nil {
			return t, fmt.Errorf("upstream %s: %w", r.ID(), err)
		}
		typ, details := "Unknown", ""
		switch {
		case u.Spec.Static != nil:
			typ = "Static"
			lines := []string{"hosts:"}
			for _, h := range u.Spec.Static.Hosts {
				lines = append(lines, fmt.Sprintf("- %s:%d", h.Addr, h.Port))
			}
			details = strings.Join(lines, "\n")
		case u.Spec.Kube != nil:
			typ = "Kubernetes"
			k := u.Spec.Kube
			details = fmt.Sprintf("svc name: %s\nsvc namespace: %s\nport: %d", k.ServiceName, k.ServiceNamespace, k.ServicePort)
		}
		t.Rows = append(t.Rows, []string{r.ID(), typ, string(r.State()), details})
	}
	return t, nil
}

// VirtualServices is VIRTUAL SERVICE | DISPLAY NAME | DOMAINS | SSL | STATUS |
// LISTENERPLUGINS | ROUTES | DATA PLANE, a route per line as "<prefix> -> <destination>".
func VirtualServices(rs []Resource) (Table, error) {
	t := Table{Header: []string{"VIRTUAL SERVICE", "DISPLAY NAME", "DOMAINS", "SSL", "STATUS", "LISTENERPLUGINS", "ROUTES", "DATA PLANE"}}
	for _, r := range rs {
		var vs apiv1.VirtualService
		if err := json.Unmarshal(r.Object, &vs); err != nil {
			return t, fmt.Errorf("virtual service %s: %w", r.ID(), err)
		}
		ssl := "none"
		if s := vs.Spec.SSLConfig; s != nil {
			ssl = "secret_ref " + s.SecretRef.ID(r.Namespace)
		}
		var routes []string
		for _, rt := range vs.Spec.VirtualHost.Routes {
			for _, p := range prefixes(rt) {
				routes = append(routes, p+" -> "+destination(rt, r.Namespace)+authNote(rt, r.Namespace))
			}
		}
		t.Rows = append(t.Rows, []string{r.ID(), r.Name, strings.Join(vs.Spec.VirtualHost.Domains, "\n"), ssl,
			string(r.State()), "None", strings.Join(routes, "\n"), r.dataPlane()})
	}
	return t, nil
}

func prefixes(rt apiv1.Route) []string {
	if len(rt.Matchers) == 0 {
		return []string{"/"}
	}
	out := make([]string, 0, len(rt.Matchers))
	for _, m := range rt.Matchers {
		p := m.Prefix
		if p == "" {
			p = "/"
		}
		out = append(out, p)
	}
	return out
}

func destination(rt apiv1.Route, ns string) string {
	switch {
	case rt.RouteAction == nil || rt.RouteAction.Single == nil:
		return "(none)"
	case rt.RouteAction.Single.Upstream != nil:
		return rt.RouteAction.Single.Upstream.ID(ns) + " (upstream)"
	case rt.RouteAction.Single.Kube != nil:
		k := rt.RouteAction.Single.Kube.Ref
		kns := k.Namespace
		if kns == "" {
			kns = ns
		}
		return fmt.Sprintf("%s.%s:%d (service)", kns, k.Name, k.Port)
	}
	return "(none)"
}

func authNote(rt apiv1.Route, ns string) string {
	if o := rt.Options; o != nil && o.Extauth != nil && o.Extauth.ConfigRef != nil {
		return " [auth " + o.Extauth.ConfigRef.ID(ns) + "]"
	}
	return ""
}

// AuthConfigs is AUTH CONFIG | STATUS | STEPS, a step per line.
func AuthConfigs(rs []Resource) (Table, error) {
	t := Table{Header: []string{"AUTH CONFIG", "STATUS", "STEPS", "DATA PLANE"}}
	for _, r := range rs {
		var ac apiv1.AuthConfig
		if err := json.Unmarshal(r.Object, &ac); err != nil {
			return t, fmt.Errorf("auth config %s: %w", r.ID(), err)
		}
		var steps []string
		for i, s := range ac.Spec.Configs {
			switch {
			case s.PluginAuth != nil:
				steps = append(steps, fmt.Sprintf("%d. pluginAuth %s", i+1, s.PluginAuth.Name))
			case s.OAuth2 != nil && s.OAuth2.OIDCAuthorizationCode != nil:
				o := s.OAuth2.OIDCAuthorizationCode
				steps = append(steps, fmt.Sprintf("%d. oidcAuthorizationCode %s at %s", i+1, o.ClientID, o.IssuerURL))
			default:
				steps = append(steps, fmt.Sprintf("%d. (empty)", i+1))
			}
		}
		t.Rows = append(t.Rows, []string{r.ID(), string(r.State()), strings.Join(steps, "\n"), r.dataPlane()})
	}
	return t, nil
}
