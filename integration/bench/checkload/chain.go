package checkload

import (
	"context"
	"fmt"
	"strings"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// LongChainSteps is the length of the long chain: what a further step costs under
// load is the slope from the one-step chain to it, over its further steps.
const LongChainSteps = 21

// LongChainPath is the load through the long chain ("chain21").
var LongChainPath = fmt.Sprintf("chain%d", LongChainSteps)

// ConfigID is the route of the one-step chain, as in examples/default.
const ConfigID = "gatehouse-system.plugin-auth"

// Paths are the workloads of the plugin chain: the two decisions of the one-step
// chain, by the x-required value that leads to each, and the allow of the three-step
// and the long chain (every step runs).
var Paths = []struct{ Name, Value, ConfigID string }{
	{"allow", "alpha", ConfigID},
	{"deny", "nope", ConfigID},
	{"chain3", "alpha", "gatehouse-system.plugin-chain"},
	{LongChainPath, "alpha", fmt.Sprintf("gatehouse-system.plugin-chain-%d", LongChainSteps)},
}

// PathNames are the names of Paths.
func PathNames() []string {
	names := make([]string, len(Paths))
	for i, p := range Paths {
		names[i] = p.Name
	}
	return names
}

// chainYAML is an AuthConfig name with steps required_header steps, each allowing
// "alpha" and a value of its own, so that every step runs for "alpha".
func chainYAML(name string, steps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: enterprise.gateway.gatehouse.dev/v1\nkind: AuthConfig\nmetadata:\n  name: %s\n"+
		"  namespace: gatehouse-system\nspec:\n  configs:\n", name)
	own := []string{"beta", "gamma", "delta"}
	for i := range steps {
		v := fmt.Sprintf("v%d", i)
		if i < len(own) {
			v = own[i]
		}
		fmt.Fprintf(&b, "    - pluginAuth:\n        name: required_header\n        exportedSymbolName: Plugin\n"+
			"        config:\n          RequiredHeader: x-required\n          AllowedValues: [alpha, %s]\n", v)
	}
	return b.String()
}

// CheckRequest is what Envoy sends for a browser's API call on the plugin route of
// id: ten headers, the route's config_id and both peers.
func CheckRequest(id, required string) *authv3.CheckRequest {
	return BrowserRequest(id, "/api/v1/items?page=2", map[string]string{"accept": "application/json", "x-required": required})
}

// verify checks that s answers each of Paths as the load means to measure: the bare
// server allows all, gatehouse allows "alpha" with the plugin's header (through every
// chain) and denies "nope" with 403.
func verify(ctx context.Context, s *Server) error {
	creds := insecure.NewCredentials()
	if s.ClientTLS != "" {
		f, err := mtls.Load(s.ClientTLS, zerolog.Nop())
		if err != nil {
			return err
		}
		creds = mtls.ClientCredentials(f, mtls.RoleExtauth)
	}
	conn, err := grpc.NewClient(s.Addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := authv3.NewAuthorizationClient(conn)
	for _, p := range Paths {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := client.Check(cctx, CheckRequest(p.ConfigID, p.Value))
		cancel()
		if err == nil {
			err = expected(s.Name == "bare", p.Name == "deny", resp)
		}
		if err != nil {
			return fmt.Errorf("%s: Check (%s): %w", s.Name, p.Name, err)
		}
	}
	return nil
}

func expected(bare, deny bool, resp *authv3.CheckResponse) error {
	got, status := code.Code(resp.GetStatus().GetCode()), resp.GetDeniedResponse().GetStatus().GetCode()
	switch {
	case !bare && deny:
		if got != code.Code_PERMISSION_DENIED || status != 403 {
			return fmt.Errorf("status %s with HTTP %d, want PERMISSION_DENIED with 403", got, status)
		}
	case got != code.Code_OK:
		return fmt.Errorf("status %s, want OK", got)
	case !bare && HeaderOf(resp, "matched-allowed-headers") != "true":
		return fmt.Errorf("allowed without the plugin's header matched-allowed-headers: true (%v)", resp.GetOkResponse())
	}
	return nil
}

// HeaderOf is the value of the request header name an allowed Check adds, or "".
func HeaderOf(resp *authv3.CheckResponse, name string) string {
	for _, h := range resp.GetOkResponse().GetHeaders() {
		if h.GetHeader().GetKey() == name {
			return h.GetHeader().GetValue()
		}
	}
	return ""
}

// Answer sends req and returns the value of the request header name the allowed
// answer adds, "" when the Check is denied, and an error when it is allowed without it.
func Answer(ctx context.Context, client authv3.AuthorizationClient, req *authv3.CheckRequest, name string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, EnvoyTimeout)
	defer cancel()
	resp, err := client.Check(cctx, req)
	if err != nil {
		return "", err
	}
	if code.Code(resp.GetStatus().GetCode()) != code.Code_OK {
		return "", nil
	}
	if v := HeaderOf(resp, name); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("allowed without %s", name)
}
