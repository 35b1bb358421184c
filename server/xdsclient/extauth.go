package xdsclient

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/anypb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/server"
)

// ExtAuthHandler is the Handle of an extauth server: it applies the ExtAuthConfigs it
// is given as the full set of reg (a config that does not build is Rejected and its
// last good version keeps serving), reports the statuses to status (may be nil), and
// NACKs with one line "<config_id>: <reason>" per config that does not build. Like
// every Handle, it is called from one goroutine at a time.
func ExtAuthHandler(reg *server.Registry, status func([]server.Status)) func(string, map[string]*anypb.Any) error {
	// The client hands on the same *anypb.Any for as long as a resource is unchanged,
	// so a resource is decoded again only when a response brings a new version: an
	// edit of one config among 10,000 decodes one, and the registry is given the very
	// configs it serves, which it compares by pointer and keeps once.
	decoded := map[string]decodedConfig{}
	return func(typeURL string, res map[string]*anypb.Any) error {
		if typeURL != xds.ExtAuthConfigType {
			return fmt.Errorf("extauth is not served %s", typeURL)
		}
		next := make(map[string]decodedConfig, len(res))
		cfgs := make([]*extauthv1.ExtAuthConfig, 0, len(res))
		rejected := map[string]error{}
		for name, a := range res {
			d, ok := decoded[name]
			if !ok || d.from != a {
				d = decodeConfig(name, a)
			}
			next[name] = d
			if d.err != nil {
				rejected[name] = d.err
				continue
			}
			cfgs = append(cfgs, d.cfg)
		}
		decoded = next
		statuses := reg.Apply(cfgs, rejected)
		if status != nil {
			status(statuses)
		}
		return nackDetail(statuses)
	}
}

// decodedConfig is one resource as decoded, with the resource it came from.
type decodedConfig struct {
	from *anypb.Any
	cfg  *extauthv1.ExtAuthConfig
	err  error
}

func decodeConfig(name string, a *anypb.Any) decodedConfig {
	d := decodedConfig{from: a}
	cfg := &extauthv1.ExtAuthConfig{}
	switch err := a.UnmarshalTo(cfg); {
	case err != nil:
		d.err = fmt.Errorf("unpacking %s: %w", a.GetTypeUrl(), err)
	case cfg.GetConfigId() != name:
		d.err = fmt.Errorf("config_id %q differs from the resource name", cfg.GetConfigId())
	default:
		d.cfg = cfg
	}
	return d
}

// nackDetail is the NACK error_detail for statuses: one line per Rejected config.
func nackDetail(statuses []server.Status) error {
	var lines []string
	for _, st := range statuses {
		if st.State == server.StateRejected {
			// One line per config, so a reason of several lines is folded.
			lines = append(lines, st.ID+": "+strings.ReplaceAll(st.Reason, "\n", "; "))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	slices.Sort(lines)
	return errors.New(strings.Join(lines, "\n"))
}
