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
// NACKs with one line "<config_id>: <reason>" per config that does not build.
func ExtAuthHandler(reg *server.Registry, status func([]server.Status)) func(string, map[string]*anypb.Any) error {
	return func(typeURL string, res map[string]*anypb.Any) error {
		if typeURL != xds.ExtAuthConfigType {
			return fmt.Errorf("extauth is not served %s", typeURL)
		}
		cfgs := make([]*extauthv1.ExtAuthConfig, 0, len(res))
		rejected := map[string]error{}
		for name, a := range res {
			cfg := &extauthv1.ExtAuthConfig{}
			if err := a.UnmarshalTo(cfg); err != nil {
				rejected[name] = fmt.Errorf("unpacking %s: %w", a.GetTypeUrl(), err)
				continue
			}
			if cfg.GetConfigId() != name {
				rejected[name] = fmt.Errorf("config_id %q differs from the resource name", cfg.GetConfigId())
				continue
			}
			cfgs = append(cfgs, cfg)
		}
		statuses := reg.Apply(cfgs, rejected)
		if status != nil {
			status(statuses)
		}
		return nackDetail(statuses)
	}
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
