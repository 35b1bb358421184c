package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// compareChecks starts `gatehouse extauth` twice on the plugin section's AuthConfigs,
// in plain text and with --tls-dir (both on serverCPU), and loads them alternately
// with the allowed Check through the one-step chain: at full speed for CPU per Check,
// then at rateShare of plain text's maximum for latency. ghz presents the gateway
// proxy's certificate to the mTLS server.
func compareChecks(ctx context.Context, o options, bins binaries, procs *procSet, tmp string, certs string, res *mtlsResult) error {
	ghz, err := findGhz(ctx, tmp)
	if err != nil {
		return err
	}
	dir := filepath.Join(tmp, "mtls-check")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := filepath.Join(dir, "auth_config.yaml")
	if err := os.WriteFile(cfg, []byte(authConfigYAML()), 0o644); err != nil {
		return err
	}
	addrs, err := freeAddrs(2)
	if err != nil {
		return err
	}
	plain := &server{name: modePlain, addr: addrs[0]}
	secure := &server{name: modeMTLS, addr: addrs[1], clientTLS: filepath.Join(certs, "proxy-gateway-proxy")}
	for _, s := range []*server{plain, secure} {
		args := []string{"extauth", "--config", cfg, "--plugin-dir", bins.pluginDir, "--listen", s.addr}
		if s.clientTLS != "" {
			args = append(args, "--tls-dir", filepath.Join(certs, mtls.RoleExtauth))
		}
		bin, args := pinned(serverCPU, bins.gatehouse, args...)
		if s.proc, err = procs.start("gatehouse ("+s.name+")", filepath.Join(dir, s.name+".log"), serverEnv(), bin, args...); err != nil {
			return err
		}
		defer procs.stop(s.proc)
	}
	for _, s := range []*server{plain, secure} {
		if err := waitReady(ctx, s); err != nil {
			return err
		}
	}
	l, err := newLoader(ctx, ghz, dir, o.duration, o.concurrency)
	if err != nil {
		return err
	}
	if l.data["allow"], err = writeRequest(dir, "allow", configID, "alpha"); err != nil {
		return err
	}
	// The plain server stands where the bare one does in the plugin section: first in
	// odd rounds, the denominator of every ratio.
	ph := phase{servers: servers{bare: plain, gatehouse: secure}, loads: []string{"allow"}}
	if res.Checks, err = l.measure(ctx, ph, o.mtlsRounds); err != nil {
		return err
	}
	if o.rateRounds == 0 {
		return nil
	}
	var rps []float64
	for _, m := range res.Checks {
		if m.Server == modePlain {
			rps = append(rps, m.RPS)
		}
	}
	res.Rate = int(median(rps) * rateShare)
	progress(fmt.Sprintf("mtls: latency at %d req/s, %.0f%% of plain text's maximum", res.Rate, rateShare*100))
	res.RateChecks, err = l.measureAtRate(ctx, ph, "allow", res.Rate, o.mtlsRounds)
	return err
}
