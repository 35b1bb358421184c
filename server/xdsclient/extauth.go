package xdsclient

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

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
	// edit of one config decodes that one alone, and the registry is given the very
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

// The bounds of a NACK's error_detail: a reason is cut at maxReasonBytes, and lines stop
// at maxDetailBytes, well inside what the control plane accepts (xds.MaxRequestSize),
// with a last line saying how many more configs were rejected. Every config's whole
// reason stays at extauth's /auth-configs.
const (
	maxReasonBytes = 1 << 10
	maxDetailBytes = xds.MaxRequestSize / 4
)

// nackDetail is the NACK error_detail for statuses: one line per Rejected config,
// "<config_id>: <reason>".
func nackDetail(statuses []server.Status) error {
	var lines []string
	for _, st := range statuses {
		if st.State == server.StateRejected {
			// One line per config, so a reason of several lines is folded.
			lines = append(lines, st.ID+": "+cut(strings.ReplaceAll(st.Reason, "\n", "; "), maxReasonBytes))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	slices.Sort(lines)
	size := 0
	for i, l := range lines {
		if size += len(l) + 1; size > maxDetailBytes-128 { // room for the count line
			lines = append(lines[:i], fmt.Sprintf("(and %d more configs rejected; extauth's /auth-configs lists them all)", len(lines)-i))
			break
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// cut shortens s to at most n bytes, at a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "… (cut)"
	i := n - len(mark)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + mark
}
