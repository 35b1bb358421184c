package xdsclient_test

import (
	"strings"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// TestRunTakesResponsesOverFourMiB: the route configuration of ~10,000 VirtualServices
// is one resource of about 4 MiB, gRPC's default receive limit, past which the client
// failed every response and never got a config.
func TestRunTakesResponsesOverFourMiB(t *testing.T) {
	big := &extauthv1.ExtAuthConfig{ConfigId: "ns.big", Steps: []*extauthv1.Step{{Kind: &extauthv1.Step_PluginAuth{
		PluginAuth: &extauthv1.PluginAuth{Name: strings.Repeat("x", 6<<20)},
	}}}}
	c := startCP(t, "127.0.0.1:0", map[string]map[string]types.Resource{xds.ExtAuthConfigType: {"ns.big": big}})
	rec := &recorder{}
	run(t, c.addr, rec)
	waitSet(t, rec, xds.ExtAuthConfigType, "ns.big")
}
