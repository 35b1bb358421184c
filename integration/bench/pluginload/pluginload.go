// Package pluginload is the plugin-load section of `make bench`: a new plugin .so in
// extauth's folder, timed from its rename to a Check it answers, with what gatehouse's
// log and /proc show meanwhile.
package pluginload

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The plugin-load phase serves one AuthConfig whose only step is loadPluginFile, built
// from integration/bench/testdata/loadplugin.
const (
	loadPluginModule = "integration/bench/testdata/loadplugin"
	loadPluginFile   = "loadplugin.so"
	loadPluginHeader = "x-plugin-build"
	loadConfigID     = "gatehouse-system.plugin-load"
	// checkEvery is how often a Check asks which build serves during a swap.
	checkEvery = 5 * time.Millisecond
	// swapTimeout bounds one swap; the target is 1s.
	swapTimeout = 10 * time.Second
	// swapGap is the pause before each swap, so that gatehouse's next spare trial-load
	// child, started once a swap is done, is not timed with the next swap.
	swapGap = time.Second
)

const loadAuthConfigYAML = `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: plugin-load
  namespace: gatehouse-system
spec:
  configs:
    - pluginAuth:
        name: loadplugin
        exportedSymbolName: Plugin
`

// buildLoadPlugins builds n versions of the plugin with `gatehouse plugin build`, the
// way a plugin author would: version i has Build = "i", so each build differs and has
// its own plugin path. It returns the .so files, version 1 first.
func buildLoadPlugins(ctx context.Context, root, dir, gatehouse string, n int) ([]string, error) {
	src := filepath.Join(root, loadPluginModule)
	code, err := os.ReadFile(filepath.Join(src, "loadplugin.go"))
	if err != nil {
		return nil, err
	}
	const constant = `const Build = "dev"`
	if !strings.Contains(string(code), constant) {
		return nil, fmt.Errorf("%s/loadplugin.go: no %s to replace", loadPluginModule, constant)
	}
	var out []string
	for i := 1; i <= n; i++ {
		v := strconv.Itoa(i)
		mod := filepath.Join(dir, "loadplugin-src", v)
		if err := os.CopyFS(mod, os.DirFS(src)); err != nil {
			return nil, err
		}
		versioned := strings.Replace(string(code), constant, `const Build = "`+v+`"`, 1)
		if err := os.WriteFile(filepath.Join(mod, "loadplugin.go"), []byte(versioned), 0o644); err != nil {
			return nil, err
		}
		so := filepath.Join(dir, "loadplugin-out", v)
		if _, err := benchkit.Output(ctx, "", gatehouse, "plugin", "build", "--quiet", "--module", mod, "--out", so, "--gatehouse-src", root); err != nil {
			return nil, err
		}
		out = append(out, filepath.Join(so, loadPluginFile))
	}
	return out, nil
}

// swap is one plugin version taking over, timed from the rename that put it in place.
type swap struct {
	Version  int
	Appeared bool          // the folder had no plugin file before; the AuthConfig was rejected
	Serving  time.Duration // until the first Check allowed with this version's header
	Checks   int           // Checks sent until then
	observed               // what gatehouse's log and /proc showed meanwhile
}

// runSwaps starts gatehouse on an empty plugin folder and an AuthConfig that
// needs loadPluginFile, then renames each version into the folder in turn and times it.
func runSwaps(ctx context.Context, env *benchkit.Env, versions []string) ([]swap, error) {
	dir := env.Tmp
	pluginDir, stage := filepath.Join(dir, "load-plugins"), filepath.Join(dir, "load-stage")
	for _, d := range []string{pluginDir, stage} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	cfg := filepath.Join(dir, "load_auth_config.yaml")
	if err := os.WriteFile(cfg, []byte(loadAuthConfigYAML), 0o644); err != nil {
		return nil, err
	}
	addrs, err := benchkit.FreeAddrs(1)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "gatehouse-load.log")
	p, err := env.Procs.Start("gatehouse (plugin load)", logPath, benchkit.ServerEnv(), env.Bins.Gatehouse,
		"extauth", "--config", cfg, "--plugin-dir", pluginDir, "--listen", addrs[0])
	if err != nil {
		return nil, err
	}
	defer env.Procs.Stop(p)
	conn, err := grpc.NewClient(addrs[0], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	client := authv3.NewAuthorizationClient(conn)
	if err := checkload.WaitUntil(ctx, &checkload.Server{Proc: p}, func(ctx context.Context) error {
		_, err := buildServing(ctx, client)
		return err
	}); err != nil {
		return nil, err
	}
	// The folder watch starts just after the gRPC server; the first swapGap gives it a
	// moment, or the first file could land before it watches.
	var swaps []swap
	for i, so := range versions {
		time.Sleep(swapGap)
		s, err := timeSwap(ctx, client, p.Pid(), logPath, so, filepath.Join(stage, loadPluginFile), filepath.Join(pluginDir, loadPluginFile), i+1)
		if err != nil {
			return nil, fmt.Errorf("plugin load, version %d: %w", i+1, err)
		}
		s.Appeared = i == 0
		benchkit.Progress("plugin version %2d serving after %s (trial-load child %s)", s.Version, s.Serving.Round(time.Millisecond), s.trial().Round(time.Millisecond))
		swaps = append(swaps, s)
	}
	return swaps, nil
}

// timeSwap copies so next to the plugin folder, renames it into place, and sends a
// Check every checkEvery until one is allowed with version's header.
func timeSwap(ctx context.Context, client authv3.AuthorizationClient, pid int, logPath, so, staged, dst string, version int) (swap, error) {
	data, err := os.ReadFile(so)
	if err != nil {
		return swap{}, err
	}
	if err := os.WriteFile(staged, data, 0o755); err != nil {
		return swap{}, err
	}
	obs, err := newObserver(pid, logPath)
	if err != nil {
		return swap{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, swapTimeout)
	defer cancel()
	want := strconv.Itoa(version)
	s := swap{Version: version}
	obs.start()
	if err := os.Rename(staged, dst); err != nil {
		return swap{}, err
	}
	tick := time.NewTicker(checkEvery)
	defer tick.Stop()
	for {
		got, err := buildServing(ctx, client)
		s.Checks++
		if err == nil && got == want {
			s.Serving = obs.since()
			break
		}
		select {
		case <-ctx.Done():
			return swap{}, fmt.Errorf("not serving after %s (last Check: build %q, %v); %s", swapTimeout, got, err, obs.stop().summary())
		case <-tick.C:
		}
	}
	s.observed = obs.wait(ctx)
	if s.rejected != "" {
		return swap{}, fmt.Errorf("auth config rejected: %s", s.rejected)
	}
	return s, nil
}

// buildServing is the Build of the plugin version that answers a Check, or "" when
// the Check is denied (no version loaded yet).
func buildServing(ctx context.Context, client authv3.AuthorizationClient) (string, error) {
	return checkload.Answer(ctx, client, checkload.BrowserRequest(loadConfigID, "/", nil), loadPluginHeader)
}

// timeTrials runs, for each version, the trial load gatehouse runs in its child
// (`gatehouse plugin __trial`) on its own, on an otherwise idle machine, and times it
// from start to exit.
func timeTrials(ctx context.Context, gatehouse string, versions []string) ([]time.Duration, error) {
	var out []time.Duration
	for _, so := range versions {
		start := time.Now()
		res, err := benchkit.Output(ctx, "", gatehouse, "plugin", "__trial", "--symbol", "Plugin", so)
		d := time.Since(start)
		if err != nil {
			return nil, err
		}
		// The child says {"opening":true} before it opens the plugin, then gives its result.
		var r struct{ OK, Opening bool }
		dec := json.NewDecoder(strings.NewReader(res))
		for err = dec.Decode(&r); err == nil && r.Opening; err = dec.Decode(&r) {
			r = struct{ OK, Opening bool }{}
		}
		if err != nil || !r.OK {
			return nil, fmt.Errorf("trial load of %s: %s", so, res)
		}
		out = append(out, d)
	}
	return out, nil
}
