package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startControlplane runs `gatehouse controlplane --kube` as its own process (so its RSS
// is its own) and measures the time to its first complete EDS on a client.
func (b *bench) startControlplane() error {
	var err error
	if b.bin == "" {
		if b.bin, err = gatehouseBinary(); err != nil {
			return err
		}
	}
	bin := b.bin
	if b.xdsAddr, err = freeAddr(); err != nil {
		return err
	}
	admin, err := freeAddr()
	if err != nil {
		return err
	}
	log, err := os.CreateTemp("", "kubebench-controlplane-*.log")
	if err != nil {
		return err
	}
	b.admin = admin
	args := []string{"controlplane", "--kube", "--kubeconfig", b.env.Kubeconfig, "--watch-namespaces", ns,
		"--xds-listen", b.xdsAddr, "--admin-listen", admin}
	if b.statusWorkers > 0 {
		args = append(args, "--status-workers", strconv.Itoa(b.statusWorkers))
	}
	if b.statusQPS > 0 {
		args = append(args, "--status-qps", strconv.FormatFloat(b.statusQPS, 'f', -1, 64))
	}
	b.cp = exec.Command(bin, args...)
	controllerNS := ns
	if b.controllerNS != "" {
		controllerNS = b.controllerNS
	}
	b.cp.Env = append(os.Environ(), "POD_NAMESPACE="+controllerNS, "LOG_LEVEL=warn")
	b.cp.Stdout, b.cp.Stderr = log, log
	start := time.Now()
	b.started = start
	if err := b.cp.Start(); err != nil {
		return err
	}
	fmt.Printf("control plane log: %s\n", log.Name())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		if c, err := net.Dial("tcp", b.xdsAddr); err == nil {
			c.Close()
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("control plane never listened")
		}
		time.Sleep(20 * time.Millisecond)
	}
	w, err := xdsbench.Watch(ctx, b.xdsAddr, xds.DefaultProxyRole, resourcev3.EndpointType)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.WaitCount(ctx, resourcev3.EndpointType, b.services); err != nil {
		return fmt.Errorf("waiting for EDS: %w", err)
	}
	fmt.Printf("process start to every ClusterLoadAssignment on a client: %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

func (b *bench) stopControlplane() {
	if b.cp != nil && b.cp.Process != nil {
		_ = b.cp.Process.Signal(syscall.SIGTERM)
		_ = b.cp.Wait()
	}
}

// rss returns the control plane's VmRSS and VmHWM in kB (0 when it is gone).
func (b *bench) rss() (rss, hwm int) {
	m, _ := benchkit.ReadMem(b.cp.Process.Pid)
	return int(m.RSS >> 10), int(m.Peak >> 10)
}

// clusterOf is the EDS cluster of Service s.
func clusterOf(s int) string { return ns + "." + apiv1.KubeUpstreamName(ns, serviceName(s), 80) }
