// Command kubebench measures the control plane's Kubernetes source at scale against a
// real API server (internal/kubetest) and a real `gatehouse controlplane --kube`
// process: 2,000 Services with 20,000 endpoints, a rolling update of one Service's 50
// endpoints seen on a connected delta ADS client, 10,000 VirtualServices applied at
// once until every status is written, the control plane's RSS, and a first sync (a
// control plane of another namespace started on the 10,000 stored VirtualServices
// until it wrote a status entry on each). Figures go to
// stdout; with -write, its goals go to integration/bench/results/kube.json, from which
// `go run ./integration/bench -table -write` puts them in BENCHMARKS.md's goal table.
//
//	go run ./integration/kube/kubebench [-services 2000] [-endpoints 20000] [-vs 10000] [-write]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

const ns = "bench"

type bench struct {
	env      *kubetest.Env
	client   kubernetes.Interface
	dyn      dynamic.Interface
	xdsAddr  string
	cp       *exec.Cmd
	bin      string    // the gatehouse binary, built once
	started  time.Time // when the control plane process started
	admin    string
	services int
	// controllerNS is the control plane's POD_NAMESPACE (default: the bench's).
	controllerNS string
	// statusWorkers and statusQPS, when set, are passed to the control plane.
	statusWorkers int
	statusQPS     float64
	// profile, when set, is where a CPU profile of the control plane during the
	// VirtualServices phase is written.
	profile string
	// heapProfile, when set, is where the control plane's heap profile is written once
	// every VirtualService's status is Accepted (when its resident memory is measured).
	heapProfile string
	goals       []benchkit.Goal // what the run measured against issue 11's targets
}

func main() {
	services := flag.Int("services", 2000, "Services (one port each)")
	endpoints := flag.Int("endpoints", 20000, "endpoints in all; the first Service has 50")
	vss := flag.Int("vs", 10000, "VirtualServices applied at once")
	b := &bench{}
	flag.IntVar(&b.statusWorkers, "status-workers", 0, "the control plane's --status-workers (default: its own)")
	flag.Float64Var(&b.statusQPS, "status-qps", 0, "the control plane's --status-qps (default: its own)")
	flag.StringVar(&b.profile, "cpuprofile", "", "write a CPU profile of the control plane during the VirtualServices phase here")
	flag.StringVar(&b.heapProfile, "heapprofile", "", "write the control plane's heap profile here once every VirtualService is Accepted")
	write := flag.Bool("write", false, "store the goals in -results (kube.json) for the goal table of BENCHMARKS.md")
	results := flag.String("results", "integration/bench/results", "folder of the bench's stored results")
	flag.Parse()
	err := b.run(*services, *endpoints, *vss)
	if err == nil && *write {
		err = benchkit.SaveResult(*results, benchkit.Result{Section: "kube", Date: time.Now().UTC().Format("2006-01-02"),
			Command: strings.Join(append([]string{"go", "run", "./integration/kube/kubebench"}, os.Args[1:]...), " "), Goals: b.goals})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubebench:", err)
		os.Exit(1)
	}
}

func (b *bench) run(services, endpoints, vss int) error {
	ctx := context.Background()
	env, err := kubetest.Start()
	if err != nil {
		return err
	}
	defer env.Stop()
	defer func() {
		if b.bin != "" {
			_ = os.RemoveAll(filepath.Dir(b.bin))
		}
	}()
	b.env, b.services = env, services
	if b.client, err = kubernetes.NewForConfig(env.Config); err != nil {
		return err
	}
	if b.dyn, err = dynamic.NewForConfig(env.Config); err != nil {
		return err
	}
	crds, err := env.CreateCRDs()
	if err != nil {
		return err
	}
	if err := env.WaitCRDs(ctx, crds); err != nil {
		return err
	}
	fmt.Printf("kube-apiserver %s and etcd on loopback; %d Services, %d endpoints, %d VirtualServices\n", "v1.37", services, endpoints, vss)

	start := time.Now()
	if err := b.createServices(ctx, services, endpoints); err != nil {
		return err
	}
	fmt.Printf("created %d Services and their EndpointSlices in %v\n", services, time.Since(start).Round(time.Millisecond))

	if err := b.startControlplane(); err != nil {
		return err
	}
	defer b.stopControlplane()
	if err := b.rollingUpdate(ctx, services); err != nil {
		return err
	}
	if err := b.applyVirtualServices(ctx, vss, services); err != nil {
		return err
	}
	rss, hwm := b.rss()
	fmt.Printf("control plane RSS %d MB (peak %d MB) with %d Services, %d endpoints and %d VirtualServices\n", rss>>10, hwm>>10, services, endpoints, vss)
	b.goals = append(b.goals, benchkit.Goal{What: fmt.Sprintf("kube: control-plane RSS with %d Services, %d endpoints and %d VirtualServices", services, endpoints, vss),
		Target: 500, Unit: "MB", Below: true, Rounds: []float64{float64(rss >> 10)}})
	if err := b.firstSync(ctx, vss); err != nil {
		return err
	}
	rss, hwm = b.rss()
	fmt.Printf("control plane RSS %d MB (peak %d MB) after the first sync\n", rss>>10, hwm>>10)
	return nil
}

// gatehouseBinary builds the gatehouse binary into a temporary folder; the caller
// removes filepath.Dir of what it returns.
func gatehouseBinary() (string, error) {
	dir, err := os.MkdirTemp("", "kubebench-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "gatehouse")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/gatehouse")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return bin, cmd.Run()
}
