package examples

import (
	"fmt"
	"net"
	"strconv"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// Targets points the Upstreams that stand for `gatehouse dev`'s own services at the
// addresses it serves them on: the echo Upstream (when the resources have one; echo ""
// leaves it) and the extauth Upstream (added when the resources have none, so a folder
// of routes and AuthConfigs works without knowing where dev's extauth listens).
func Targets(echo, extauth string) (func(*source.Input) *source.Input, error) {
	echoHost, err := hostOf(echo)
	if err != nil && echo != "" {
		return nil, fmt.Errorf("--echo-listen: %w", err)
	}
	extauthHost, err := hostOf(extauth)
	if err != nil {
		return nil, fmt.Errorf("--extauth-listen: %w", err)
	}
	return func(in *source.Input) *source.Input {
		out := *in
		found := false
		var put []source.Resource
		for r := range in.Resources.All() {
			switch {
			case r.Kind != apiv1.KindUpstream:
			case r.ID() == EchoUpstream && echo != "":
				put = append(put, pointAt(*r, echoHost))
			case r.ID() == ExtauthUpstream:
				put, found = append(put, pointAt(*r, extauthHost)), true
			}
		}
		if !found {
			u := &apiv1.Upstream{Metadata: apiv1.Metadata{Name: "extauth", Namespace: "gatehouse-system"}}
			r := source.Resource{APIVersion: apiv1.CoreAPIVersion, Kind: apiv1.KindUpstream,
				Namespace: u.Metadata.Namespace, Name: u.Metadata.Name, Origin: "gatehouse dev", Object: u}
			put = append(put, pointAt(r, extauthHost))
		}
		out.Resources = in.Resources.With(put, nil)
		return &out
	}, nil
}

// pointAt returns r (an Upstream) with its hosts replaced by h, as a new object.
func pointAt(r source.Resource, h apiv1.Host) source.Resource {
	u := *r.Object.(*apiv1.Upstream)
	u.Spec.Static = &apiv1.StaticUpstream{Hosts: []apiv1.Host{h}}
	u.Spec.Kube = nil
	r.Object = &u
	r.Hash = source.Hash(r.APIVersion, r.Kind, &u)
	return r
}

// hostOf is the Upstream host that reaches a service listening on addr ("host:port";
// an unspecified host is reached on 127.0.0.1).
func hostOf(addr string) (apiv1.Host, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return apiv1.Host{}, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return apiv1.Host{}, fmt.Errorf("port %q: %w", portStr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return apiv1.Host{Addr: host, Port: port}, nil
}
