package kube

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
)

// StatusOptions configure the status write-back.
type StatusOptions struct {
	// Edge returns the pipeline's last edge stage (with the clients' NACKs).
	Edge func() *validate.Edge
	// QPS and Burst bound the status writes (default 1000/s, burst 200): a first sync
	// of many resources must not drown the API server.
	QPS   float64
	Burst int
	// Workers write in parallel (default 32): each write waits for the API server's
	// answer, so the writes in flight bound the rate.
	Workers int
	// Resync compares every status again this often (default 10s), which also picks
	// up NACKs recorded between Inputs and statuses changed by someone else. On a new
	// Input only the resources whose entry in the edge changed are compared.
	Resync time.Duration
	// FieldManager names the writer in managedFields (default "gatehouse").
	FieldManager string
	// DataPlane, when set, says how far r reached the clients (snapshots.DataPlane),
	// written as the entry's dataPlane. Acknowledgements do not change the edge, so a
	// change of it alone is written at the next Resync.
	DataPlane func(r *validate.Resource) string
}

// statusWriter writes each custom resource's status entry when it differs from what
// the pipeline says, only while this replica leads.
type statusWriter struct {
	s       *Source
	o       StatusOptions
	limiter *rate.Limiter
	queue   workqueue.TypedRateLimitingInterface[source.Key]

	mu sync.Mutex
	// last is the edge last reconciled: the next Input's is compared with it
	// (validate.Edge.ChangedSince), so an edit looks at the resources it changed, not
	// at all of them on every Input.
	// nil until a term's first pass.
	last *validate.Edge
	// compared counts the resources compared (for tests).
	compared int
	desired  map[source.Key]apiv1.ReporterStatus
	// written is what this replica last wrote, and the object's resourceVersion just
	// before, so a write the informer has not delivered yet is not made twice.
	written map[source.Key]writtenStatus
}

type writtenStatus struct {
	status   apiv1.ReporterStatus
	rvBefore string
}

func newStatusWriter(s *Source, o StatusOptions) *statusWriter {
	if o.QPS <= 0 {
		o.QPS = 1000
	}
	if o.Burst <= 0 {
		o.Burst = 200
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.FieldManager == "" {
		o.FieldManager = "gatehouse"
	}
	if o.Resync <= 0 {
		o.Resync = 10 * time.Second
	}
	return &statusWriter{
		s: s, o: o, limiter: rate.NewLimiter(rate.Limit(o.QPS), o.Burst),
		desired: map[source.Key]apiv1.ReporterStatus{}, written: map[source.Key]writtenStatus{},
	}
}

// run writes statuses until ctx ends, reconciling whenever poke fires and every Resync.
func (w *statusWriter) run(ctx context.Context, poke <-chan struct{}) {
	// A queue per term of leadership: the last one was shut down when it ended.
	w.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[source.Key]())
	var wg sync.WaitGroup
	for range w.o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.next(ctx) {
			}
		}()
	}
	tick := time.NewTicker(w.o.Resync)
	defer tick.Stop()
	w.mu.Lock()
	w.last = nil // what the last term compared may have been written over since
	w.mu.Unlock()
	full := true
	for {
		w.reconcile(full)
		select {
		case <-ctx.Done():
			w.queue.ShutDown()
			wg.Wait()
			return
		case <-poke:
			full = false
		case <-tick.C:
			full = true
		}
	}
}

// reconcile queues every custom resource whose stored status entry differs: of every
// resource when full, else of those whose entry in the edge is not the one last
// reconciled (new, edited, or with a NACK's status).
func (w *statusWriter) reconcile(full bool) {
	edge := w.o.Edge()
	inf := w.s.informers()
	if edge == nil || inf == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	last := w.last
	w.last = edge
	if !full && last != nil {
		if last == edge {
			return
		}
		edge.ChangedSince(last, func(r *validate.Resource) { w.compare(inf, r) })
		return
	}
	for r := range edge.Resources.Values() {
		w.compare(inf, r)
	}
}

// compare queues r's custom resource when its stored status entry differs from r's.
func (w *statusWriter) compare(inf *informers, r *validate.Resource) {
	w.compared++
	k, ok := kindOf(r.Key())
	if !ok || r.Origin != Origin(r.Kind, r.Namespace, r.Name) {
		return // a Secret, or a discovered Upstream: no object to write to
	}
	gen, ok := w.s.Generation(r.Key())
	if !ok {
		return
	}
	want := Desired(r, gen)
	if w.o.DataPlane != nil {
		want.DataPlane = w.o.DataPlane(r)
	}
	w.desired[r.Key()] = want
	u := inf.customResource(k.GVR, r.Namespace, r.Name)
	if u == nil {
		return
	}
	if got, ok := current(u, w.s.o.ControllerNamespace); ok && got == want {
		return
	}
	if wr, ok := w.written[r.Key()]; ok && wr.status == want && wr.rvBefore == u.GetResourceVersion() {
		return // written; the informer has not delivered it yet
	}
	w.queue.Add(r.Key())
}

func (w *statusWriter) next(ctx context.Context) bool {
	key, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(key)
	if err := w.write(ctx, key); err != nil {
		if ctx.Err() == nil {
			w.s.o.Log.Warn().Str("resource", key.String()).Err(err).Msg("kube: status not written; retrying")
			w.queue.AddRateLimited(key)
		}
		return true
	}
	w.queue.Forget(key)
	return true
}

func (w *statusWriter) write(ctx context.Context, key source.Key) error {
	k, _ := kindOf(key)
	w.mu.Lock()
	want, ok := w.desired[key]
	w.mu.Unlock()
	u := w.s.informers().customResource(k.GVR, key.Namespace, key.Name)
	if !ok || u == nil {
		return nil // gone
	}
	if got, ok := current(u, w.s.o.ControllerNamespace); ok && got == want {
		return nil
	}
	if err := w.limiter.Wait(ctx); err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"statuses": map[string]any{w.s.o.ControllerNamespace: patchEntry(want)}}})
	if err != nil {
		return err
	}
	_, err = w.s.o.Dynamic.Resource(k.GVR).Namespace(key.Namespace).
		Patch(ctx, key.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: w.o.FieldManager}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.written[key] = writtenStatus{status: want, rvBefore: u.GetResourceVersion()}
	w.mu.Unlock()
	return nil
}

// patchEntry is the merge patch of a status entry: a reason it no longer has is removed
// (null), or a Rejected entry's reasons would stay on the Accepted one that follows and
// the entry would never equal what the pipeline says.
func patchEntry(st apiv1.ReporterStatus) map[string]any {
	e := map[string]any{"state": st.State, "reportedBy": st.ReportedBy, "observedGeneration": st.ObservedGeneration, "reason": nil}
	if st.Reason != "" {
		e["reason"] = st.Reason
	}
	e["dataPlane"] = nil
	if st.DataPlane != "" {
		e["dataPlane"] = st.DataPlane
	}
	return e
}
