package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
)

// controlplaneProc is a running `gatehouse controlplane` and the two ADS clients
// watching it, one per role.
type controlplaneProc struct {
	proc         *proc
	xds, admin   string
	extauth      *xdsbench.Watcher
	proxy        *xdsbench.Watcher
	routeConfig  string // the name of the one route configuration served
	readyExtauth time.Duration
	readyProxy   time.Duration
}

// startControlplane starts the control plane on dir (pinned to serverCPU), connects a
// delta ADS client of each role as soon as its port is open, and times the process
// start to each role's first complete state: n ExtAuthConfigs for extauth; for the
// proxy, n+1 clusters and endpoints (the services' and extauth's), a listener and a
// route configuration. The clients reach it as link says.
func startControlplane(ctx context.Context, procs *procSet, gatehouse, dir, logPath string, n int, link xdsLink) (*controlplaneProc, error) {
	addrs, err := freeAddrs(2)
	if err != nil {
		return nil, err
	}
	cp := &controlplaneProc{xds: addrs[0], admin: addrs[1]}
	bin, args := pinned(serverCPU, gatehouse, append([]string{"controlplane", "--resources", dir, "--xds-listen", cp.xds, "--admin-listen", cp.admin}, link.serverArgs()...)...)
	start := time.Now()
	if cp.proc, err = procs.start("controlplane", logPath, serverEnv(), bin, args...); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := waitPort(wctx, cp.proc, cp.xds); err != nil {
		return nil, err
	}
	if cp.extauth, err = cp.watch(ctx, link, xds.RoleExtauth, xds.ExtAuthConfigType); err != nil {
		cp.close()
		return nil, err
	}
	if cp.proxy, err = cp.watch(ctx, link, xds.DefaultProxyRole, xds.ProxyTypes...); err != nil {
		cp.close()
		return nil, err
	}
	complete := map[*xdsbench.Watcher]map[string]int{
		cp.extauth: {xds.ExtAuthConfigType: n},
		cp.proxy:   {xds.ClusterType: n + 1, xds.EndpointType: n + 1, xds.ListenerType: 1, xds.RouteType: 1},
	}
	ready := map[*xdsbench.Watcher]*time.Duration{cp.extauth: &cp.readyExtauth, cp.proxy: &cp.readyProxy}
	errs := make(chan error, 2)
	for w, want := range complete {
		go func() {
			errs <- w.WaitFor(wctx, func() bool {
				for typ, count := range want {
					if w.Count(typ) < count {
						return false
					}
				}
				*ready[w] = time.Since(start)
				return true
			})
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			cp.close()
			if exit := cp.proc.exited(); exit != nil {
				return nil, exit
			}
			return nil, fmt.Errorf("controlplane: waiting for the first complete state of %d services: %w (its log: %s)", n, err, logPath)
		}
	}
	if names := cp.proxy.Names(xds.RouteType); len(names) == 1 {
		cp.routeConfig = names[0]
	} else {
		cp.close()
		return nil, fmt.Errorf("controlplane: want one route configuration, got %q", names)
	}
	return cp, nil
}

// watch connects a watcher of role to cp as link says.
func (cp *controlplaneProc) watch(ctx context.Context, link xdsLink, role string, types ...string) (*xdsbench.Watcher, error) {
	creds, err := link.credentials(role)
	if err != nil {
		return nil, err
	}
	return xdsbench.WatchWith(ctx, cp.xds, creds, role, types...)
}

func (cp *controlplaneProc) close() {
	if cp.extauth != nil {
		cp.extauth.Close()
	}
	if cp.proxy != nil {
		cp.proxy.Close()
	}
}

// waitPort polls addr until it accepts a connection (a gRPC client that finds it
// closed would back off for a second, which would count in the start time).
func waitPort(ctx context.Context, p *proc, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if err := p.exited(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %s never accepted a connection: %w", p.name, addr, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// rss is the resident set size of pid, from /proc/<pid>/status.
func rss(pid int) (int64, error) {
	st, err := readMemStatus(pid)
	return st.RSS, err
}

// memStatus is what /proc/<pid>/status says about a process's memory.
type memStatus struct {
	RSS  int64 // VmRSS: resident now
	File int64 // RssFile: of it, pages of mapped files (mostly the binary's own)
	Peak int64 // VmHWM: the highest RSS so far
}

// readMemStatus reads pid's memStatus.
func readMemStatus(pid int) (memStatus, error) {
	var st memStatus
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return st, err
	}
	defer f.Close()
	fields := map[string]*int64{"VmRSS:": &st.RSS, "RssFile:": &st.File, "VmHWM:": &st.Peak}
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, v, _ := strings.Cut(sc.Text(), "\t")
		dst := fields[name]
		if dst == nil {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return st, fmt.Errorf("/proc/%d/status: %s %q: %w", pid, name, v, err)
		}
		*dst = kb << 10
		found++
	}
	if found != len(fields) {
		return st, fmt.Errorf("/proc/%d/status: want VmRSS, RssFile and VmHWM, found %d of them", pid, found)
	}
	return st, sc.Err()
}

// metric reads the first sample of each name from a Prometheus text endpoint.
func metric(ctx context.Context, url string, names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		for _, want := range names {
			if _, seen := out[want]; !seen && name == want {
				if v, err := strconv.ParseFloat(value, 64); err == nil {
					out[want] = v
				}
			}
		}
	}
	return out, sc.Err()
}
