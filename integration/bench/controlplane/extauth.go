package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
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
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	res := &extauthResult{Configs: n}
	for {
		accepted, err := acceptedConfigs(ctx, "http://"+addrs[1]+"/auth-configs")
		if err == nil && accepted >= n {
			res.Applied = time.Since(start)
			break
		}
		if exit := p.Exited(); exit != nil {
			return nil, exit
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("extauth: %d configs not all accepted after 15 minutes (last: %d, %v); its log: %s", n, accepted, err, logPath)
		case <-time.After(250 * time.Millisecond):
		}
	}
	pid := p.Pid()
	if res.RSS, err = rss(pid); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(5 * time.Second):
	}
	if res.RSSSettled, err = rss(pid); err != nil {
		return nil, err
	}
	const inuse = "go_memstats_heap_inuse_bytes"
	m, err := metric(ctx, "http://"+addrs[1]+"/metrics", inuse)
	if err != nil {
		return nil, fmt.Errorf("extauth: %w", err)
	}
	res.HeapInuse = int64(m[inuse])
	if heapProfile != "" {
		if err := checkload.FetchProfile(ctx, "http://"+addrs[1]+"/debug/pprof/heap", heapProfile); err != nil {
			return nil, fmt.Errorf("extauth: heap profile: %w", err)
		}
	}
	return res, nil
}

// acceptedConfigs counts the generated configs an extauth admin server says it serves.
func acceptedConfigs(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	var statuses []struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&statuses); err != nil {
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
