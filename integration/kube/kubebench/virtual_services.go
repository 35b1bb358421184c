package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

func virtualService(i, services int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.gatehouse.dev/v1", "kind": "VirtualService",
		"metadata": map[string]any{"name": fmt.Sprintf("vs-%05d", i), "namespace": ns},
		"spec": map[string]any{"virtualHost": map[string]any{
			"domains": []any{fmt.Sprintf("vs-%05d.example.com", i)},
			"routes": []any{map[string]any{
				"matchers":    []any{map[string]any{"prefix": "/"}},
				"routeAction": map[string]any{"single": map[string]any{"kube": map[string]any{"ref": map[string]any{"name": serviceName(i % services), "port": int64(80)}}}},
			}},
		}},
	}}
}

// applyVirtualServices creates n VirtualServices at once (16 writers) and waits until
// every one has its status written by the control plane.
func (b *bench) applyVirtualServices(ctx context.Context, n, services int) error {
	gvr := kube.Kinds[3].GVR
	start := time.Now()
	profiled := b.startProfile(90 * time.Second)
	defer func() {
		if err := <-profiled; err != nil {
			fmt.Fprintln(os.Stderr, "kubebench: cpu profile:", err)
		}
	}()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			_, err := b.dyn.Resource(gvr).Namespace(ns).Create(gctx, virtualService(i, services), metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	applied := time.Since(start)
	if err := b.waitStatuses(ctx, n, ns, func() time.Duration { return time.Since(start) - applied }); err != nil {
		return err
	}
	fmt.Printf("%d VirtualServices: created by 16 writers in %v; every status Accepted %v after the first create (%v after the last)\n",
		n, applied.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), (time.Since(start) - applied).Round(time.Millisecond))
	b.goals = append(b.goals, benchkit.Goal{What: fmt.Sprintf("kube: %d VirtualServices created by 16 writers → every status Accepted, from the first create", n),
		Target: 30000, Unit: "ms", Below: true, Rounds: []float64{benchkit.Millis(time.Since(start))}})
	return b.writeHeapProfile()
}

// writeHeapProfile writes the control plane's heap profile (its admin's /debug/pprof)
// into b.heapProfile, when asked for.
func (b *bench) writeHeapProfile() error {
	if b.heapProfile == "" {
		return nil
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/heap", b.admin))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(b.heapProfile)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// waitStatuses waits until each of the n VirtualServices has an Accepted status entry
// under controllerNS, printing progress every 5 s at elapsed().
func (b *bench) waitStatuses(ctx context.Context, n int, controllerNS string, elapsed func() time.Duration) error {
	gvr := kube.Kinds[3].GVR
	deadline := time.Now().Add(10 * time.Minute)
	lastReport := time.Now()
	for {
		list, err := b.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err
		}
		done := 0
		for _, vs := range list.Items {
			if st, ok, _ := unstructured.NestedString(vs.Object, "status", "statuses", controllerNS, "state"); ok && st == "Accepted" {
				done++
			}
		}
		if done == n {
			break
		}
		if time.Since(lastReport) >= 5*time.Second {
			fmt.Printf("  %v: %d of %d statuses Accepted\n", elapsed().Round(time.Second), done, n)
			lastReport = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d statuses written after 10 minutes", done, n)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil
}

// firstSync restarts the control plane as the one of another namespace, so every one of
// the n VirtualServices, already stored, needs a status entry of its own: the status
// writer's throughput with no creates competing for the API server.
func (b *bench) firstSync(ctx context.Context, n int) error {
	const other = "bench-sync"
	if _, err := b.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	b.stopControlplane()
	b.controllerNS = other
	if err := b.startControlplane(); err != nil {
		return err
	}
	start := b.started
	if err := b.waitStatuses(ctx, n, other, func() time.Duration { return time.Since(start) }); err != nil {
		return err
	}
	fmt.Printf("first sync: control plane of another namespace started on %d stored VirtualServices; every status of its own Accepted %v after the process start\n",
		n, time.Since(start).Round(time.Millisecond))
	return nil
}

// startProfile fetches a CPU profile of the control plane (its admin's /debug/pprof)
// over d into b.profile, when asked for; the channel gives the outcome.
func (b *bench) startProfile(d time.Duration) <-chan error {
	out := make(chan error, 1)
	if b.profile == "" {
		out <- nil
		return out
	}
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", b.admin, int(d.Seconds())))
		if err != nil {
			out <- err
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(b.profile)
		if err != nil {
			out <- err
			return
		}
		defer f.Close()
		_, err = io.Copy(f, resp.Body)
		out <- err
	}()
	return out
}
