package kube

import (
	"context"
	"os"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaseName is the Lease the control-plane replicas of one namespace elect a leader with.
const LeaseName = "gatehouse-controlplane"

// LeaderOptions configure the election of the replica that writes statuses.
type LeaderOptions struct {
	// Identity names this replica in the Lease (default: host name and pid).
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's (15s, 10s, 2s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// OnLeading is told when this replica starts (true) or stops (false) leading.
	OnLeading func(bool)
}

// WriteStatuses writes the pipeline's statuses back while this replica leads, and
// campaigns again whenever it loses the Lease, until ctx ends. Every replica serves
// xDS from its own informers; only the leader writes, so two never fight.
func (s *Source) WriteStatuses(ctx context.Context, so StatusOptions, lo LeaderOptions) error {
	if lo.Identity == "" {
		host, _ := os.Hostname()
		lo.Identity = host + "-" + strconv.Itoa(os.Getpid())
	}
	if lo.LeaseDuration <= 0 {
		lo.LeaseDuration, lo.RenewDeadline, lo.RetryPeriod = 15*time.Second, 10*time.Second, 2*time.Second
	}
	w := newStatusWriter(s, so)
	s.mu.Lock()
	s.writer = w
	s.mu.Unlock()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: s.o.ControllerNamespace},
		Client:     s.o.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: lo.Identity},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: lo.LeaseDuration, RenewDeadline: lo.RenewDeadline, RetryPeriod: lo.RetryPeriod,
			ReleaseOnCancel: true, Name: LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					s.o.Log.Info().Str("identity", lo.Identity).Msg("kube: leading; writing statuses")
					if lo.OnLeading != nil {
						lo.OnLeading(true)
					}
					w.run(lctx, s.pokes())
				},
				OnStoppedLeading: func() {
					s.o.Log.Info().Str("identity", lo.Identity).Msg("kube: not leading; statuses left to the leader")
					if lo.OnLeading != nil {
						lo.OnLeading(false)
					}
				},
			},
		})
		if err != nil {
			return err
		}
		le.Run(ctx)
	}
	return nil
}
