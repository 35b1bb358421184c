// Package examples holds the resources `gatehouse dev` serves when it is given none,
// and walk-throughs in the folders beside it.
package examples

import (
	"embed"
	"io/fs"
	"path"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

//go:embed default/*.yaml
var defaults embed.FS

// Default returns the embedded example resources.
func Default() (*apiv1.Set, error) {
	set := &apiv1.Set{}
	entries, err := fs.ReadDir(defaults, "default")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := path.Join("default", e.Name())
		data, err := defaults.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if err := set.Add(data, "examples/"+name); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// EchoUpstream is the id of the example Upstream that stands for the built-in echo
// service.
const EchoUpstream = "gatehouse-system.echo"

// PointEchoAt makes the example echo Upstream reach the echo service at addr
// ("host:port"), so the examples work whichever port `gatehouse dev` gives it.
func PointEchoAt(set *apiv1.Set, addr string) error {
	if addr == "" {
		return nil
	}
	h, err := hostOf(addr)
	if err != nil {
		return err
	}
	for _, u := range set.Upstreams {
		if u.Metadata.ID() == EchoUpstream && u.Spec.Static != nil {
			u.Spec.Static.Hosts = []apiv1.Host{h}
		}
	}
	return nil
}

// DefaultFiles returns the embedded example files by name ("examples/default/<file>").
func DefaultFiles() (map[string][]byte, error) {
	entries, err := fs.ReadDir(defaults, "default")
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(entries))
	for _, e := range entries {
		data, err := defaults.ReadFile(path.Join("default", e.Name()))
		if err != nil {
			return nil, err
		}
		out["examples/default/"+e.Name()] = data
	}
	return out, nil
}

// ExtauthUpstream is the id of the Upstream the example Settings-less config points
// Envoy's ext_authz filter at (the control plane's default extauthzServerRef).
const ExtauthUpstream = "gatehouse-system.extauth"
