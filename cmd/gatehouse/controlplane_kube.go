package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/state"
	"gatehouse.dev/gatehouse/controlplane/validate"
)

// kubeOptions are the flags of `gatehouse controlplane --kube`.
type kubeOptions struct {
	enabled    bool
	kubeconfig string
	namespaces []string
	// leaseDuration is hidden: tests of failover shorten it.
	leaseDuration string
	// statusWorkers and statusQPS are hidden: kubebench compares settings with them.
	statusWorkers int
	statusQPS     float64
}

func addKubeFlags(cmd *cobra.Command, o *kubeOptions) {
	cmd.Flags().BoolVar(&o.enabled, "kube", false, "read resources from Kubernetes (CRDs, Secrets, Services and EndpointSlices) instead of --resources")
	cmd.Flags().StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account)")
	cmd.Flags().StringSliceVar(&o.namespaces, "watch-namespaces", nil, "namespaces to watch (default: all)")
	cmd.Flags().StringVar(&o.leaseDuration, "lease-duration", "15s", "leader election lease duration (the leader writes statuses)")
	_ = cmd.Flags().MarkHidden("lease-duration")
	cmd.Flags().IntVar(&o.statusWorkers, "status-workers", 0, "status writes in flight (default: the status writer's)")
	_ = cmd.Flags().MarkHidden("status-workers")
	cmd.Flags().Float64Var(&o.statusQPS, "status-qps", 0, "status writes per second at most (default: the status writer's)")
	_ = cmd.Flags().MarkHidden("status-qps")
}

// controllerNamespace is where this control plane runs (POD_NAMESPACE, from the
// Downward API in the chart): its status entries and Lease are named after it.
func controllerNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "gatehouse-system"
}

// kubeSource is the Kubernetes source plus the leader-elected status write-back, which
// reads the statuses of the pipeline it is bound to.
type kubeSource struct {
	*kube.Source
	log      zerolog.Logger
	leader   kube.LeaderOptions
	status   kube.StatusOptions
	pipeline *pipeline.Pipeline
}

func newKubeSource(log zerolog.Logger, o kubeOptions, mem *state.Memory) (*kubeSource, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("controlplane: kubeconfig: %w", err)
	}
	// Status writes have their own rate limit; client-go's default of 5/s is not it.
	cfg.QPS, cfg.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	lease, err := time.ParseDuration(o.leaseDuration)
	if err != nil || lease < time.Second {
		return nil, fmt.Errorf("controlplane: --lease-duration: %q is not a duration of at least 1s", o.leaseDuration)
	}
	ko := kube.Options{Client: client, Dynamic: dyn, Namespaces: o.namespaces,
		ControllerNamespace: controllerNamespace(), Log: log}
	if mem != nil {
		ko.Memory = mem
	}
	src := kube.New(ko)
	return &kubeSource{Source: src, log: log, leader: kube.LeaderOptions{
		LeaseDuration: lease, RenewDeadline: lease * 2 / 3, RetryPeriod: lease / 7,
	}, status: kube.StatusOptions{Workers: o.statusWorkers, QPS: o.statusQPS}}, nil
}

// statusWriter is a source that writes the pipeline's statuses back (kubeSource).
type statusWriter interface {
	BindPipeline(p *pipeline.Pipeline, dataPlane func(*validate.Resource) string)
}

// BindPipeline gives the source the pipeline whose statuses it writes back, and what
// says how far each resource reached the clients.
func (k *kubeSource) BindPipeline(p *pipeline.Pipeline, dataPlane func(*validate.Resource) string) {
	k.pipeline, k.status.DataPlane = p, dataPlane
}

// Run watches and, beside it, writes statuses while this replica leads.
func (k *kubeSource) Run(ctx context.Context, publish func(*source.Input)) error {
	if k.pipeline == nil {
		return errors.New("controlplane: kube source used without a pipeline")
	}
	go func() {
		so := k.status
		so.Edge = func() *validate.Edge { return k.pipeline.Overview().Edge }
		if err := k.WriteStatuses(ctx, so, k.leader); err != nil {
			k.log.Error().Err(err).Msg("kube: status write-back stopped")
		}
	}()
	return k.Source.Run(ctx, publish)
}
