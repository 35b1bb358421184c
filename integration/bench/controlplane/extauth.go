package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// extauthResult is an extauth server fed every AuthConfig by the control plane.
type extauthResult struct {
	Configs int
	// Applied is the time from its start to every config being served (Accepted at
	// its /auth-configs).
	Applied time.Duration
	// RSS when they were all applied, and five seconds later.
	RSS, RSSSettled int64
	// HeapInuse is the Go heap in use five seconds later (go_memstats_heap_inuse_bytes
	// at its /metrics): what the process keeps, apart from code, stacks and the
	// heap the runtime has not yet returned.
	HeapInuse int64
}

// runExtauthXDS starts `gatehouse extauth --xds` on the control plane's ADS address
// with the sample plugin (on benchkit.ClientCPU: the measuring clients are idle meanwhile) and
// waits until it serves n configs. With heapProfile set, it writes extauth's heap
// profile there once settled.
func runExtauthXDS(ctx context.Context, env *benchkit.Env, cp *Plane, n int, logPath, heapProfile string) (*extauthResult, error) {
	addrs, err := benchkit.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	bin, args := benchkit.Pinned(benchkit.ClientCPU, env.Bins.Gatehouse, "extauth", "--xds", cp.xds, "--plugin-dir", env.Bins.PluginDir,
		"--listen", addrs[0], "--admin-listen", addrs[1])
	start := time.Now()
	p, err := env.Procs.Start("extauth", logPath, benchkit.ServerEnv(), bin, args...)
	if err != nil {
		return nil, err
	}
	defer env.Procs.Stop(p)
	res := &extauthResult{Configs: n}
	if err := benchkit.Poll(ctx, p, 15*time.Minute, 250*time.Millisecond, func(ctx context.Context) error {
		accepted, err := acceptedConfigs(ctx, "http://"+addrs[1]+"/auth-configs")
		if err == nil && accepted < n {
			err = fmt.Errorf("%d of %d configs accepted; its log: %s", accepted, n, logPath)
		}
		return err
	}); err != nil {
		return nil, err
	}
	res.Applied = time.Since(start)
	pid := p.Pid()
	if res.RSS, err = benchkit.RSS(pid); err != nil {
		return nil, err
	}
	time.Sleep(5 * time.Second)
	if res.RSSSettled, err = benchkit.RSS(pid); err != nil {
		return nil, err
	}
	heap, err := benchkit.Metric(ctx, "http://"+addrs[1]+"/metrics", "go_memstats_heap_inuse_bytes")
	if err != nil {
		return nil, fmt.Errorf("extauth: %w", err)
	}
	res.HeapInuse = int64(heap)
	if heapProfile != "" {
		if err := benchkit.FetchProfile(ctx, "http://"+addrs[1]+"/debug/pprof/heap", heapProfile); err != nil {
			return nil, fmt.Errorf("extauth: heap profile: %w", err)
		}
	}
	return res, nil
}

// acceptedConfigs counts the generated configs an extauth admin server says it serves.
func acceptedConfigs(ctx context.Context, url string) (int, error) {
	body, err := benchkit.Get(ctx, url)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	var statuses []struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	if err := json.NewDecoder(body).Decode(&statuses); err != nil {
		return 0, fmt.Errorf("%s: %w", url, err)
	}
	n := 0
	for _, s := range statuses {
		if s.State == "Accepted" && strings.HasPrefix(s.ID, cpNamespace+".") {
			n++
		}
	}
	return n, nil
}
