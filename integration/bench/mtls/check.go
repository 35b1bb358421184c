package mtls

import (
	"context"
	"path/filepath"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// compareChecks starts `gatehouse extauth` twice on the plugin section's AuthConfigs,
// in plain text and with --tls-dir (both on benchkit.ServerCPU), and loads them alternately
// with the allowed Check through the one-step chain: at full speed for CPU per Check,
// then at checkload.RateShare of plain text's maximum for latency. ghz presents the gateway
// proxy's certificate to the mTLS server.
func compareChecks(ctx context.Context, o Options, env *benchkit.Env, certs string, res *mtlsResult) error {
	dir := filepath.Join(env.Tmp, "mtls-check")
	servers, stop, err := checkload.StartChains(ctx, env, dir, checkload.Chain{Name: modePlain}, checkload.Chain{Name: modeMTLS,
		Args: []string{"--tls-dir", filepath.Join(certs, mtls.RoleExtauth)}, ClientTLS: filepath.Join(certs, "proxy-gateway-proxy")})
	defer stop()
	if err != nil {
		return err
	}
	l, err := checkload.NewLoader(ctx, env, dir, o.Options, "allow")
	if err != nil {
		return err
	}
	// The plain server stands where the bare one does in the plugin section: first in
	// odd rounds, the denominator of every ratio.
	ph := checkload.Phase{Base: servers[0], Server: servers[1], Loads: []string{"allow"}}
	if res.Checks, err = l.Measure(ctx, ph, 0, o.Rounds); err != nil {
		return err
	}
	if o.RateRounds == 0 {
		return nil
	}
	res.Rate, res.RateChecks, err = l.AtRate(ctx, ph, res.Checks, o.Rounds)
	return err
}
