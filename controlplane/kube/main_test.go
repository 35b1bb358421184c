package kube_test

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

var env *kubetest.Env

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, &env)) }

// plane is one control-plane replica: the Kubernetes source through the real pipeline
// to a real xDS server on loopback, with the leader-elected status write-back.
type plane struct {
	addr    string
	src     *kube.Source
	p       *pipeline.Pipeline
	leading chan bool
	stop    context.CancelFunc
	done    chan struct{}
}

func startPlane(t *testing.T, ns, identity string, lease time.Duration) *plane {
	t.Helper()
	return startPlaneResync(t, ns, identity, lease, time.Second)
}

// startPlaneResync is startPlane with the status writer's Resync.
func startPlaneResync(t *testing.T, ns, identity string, lease, resync time.Duration) *plane {
	t.Helper()
	return startPlaneWith(t, ns, identity, lease, resync, nil)
}

// startPlaneWith is startPlaneResync with the status writer's DataPlane.
func startPlaneWith(t *testing.T, ns, identity string, lease, resync time.Duration, dataPlane func(*validate.Resource) string) *plane {
	t.Helper()
	client, dyn := env.Clients(t)
	log := zerolog.New(zerolog.NewTestWriter(t)).With().Str("replica", identity).Logger()
	srv := xds.NewServer(xds.Options{Log: log})
	p := pipeline.New(pipeline.Options{Log: log, Publish: srv.Publish})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	srv.Register(g)
	go func() { _ = g.Serve(lis) }()
	src := kube.New(kube.Options{Client: client, Dynamic: dyn, Namespaces: []string{ns}, ControllerNamespace: ns, Log: log})
	ctx, cancel := context.WithCancel(context.Background())
	pl := &plane{addr: lis.Addr().String(), src: src, p: p, leading: make(chan bool, 10), stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(pl.done)
		go func() { _ = p.Run(ctx, src) }()
		_ = src.WriteStatuses(ctx,
			kube.StatusOptions{Edge: func() *validate.Edge { return p.Stages().Edge }, FieldManager: "gatehouse-" + identity, Resync: resync, DataPlane: dataPlane},
			kube.LeaderOptions{Identity: identity, LeaseDuration: lease, RenewDeadline: lease * 2 / 3, RetryPeriod: lease / 7,
				OnLeading: func(b bool) { pl.leading <- b }})
	}()
	t.Cleanup(func() { pl.close(); g.Stop() })
	return pl
}

// close stops the replica (it releases its Lease) and waits for it.
func (pl *plane) close() {
	pl.stop()
	<-pl.done
}

func namespace(t *testing.T, name string) {
	t.Helper()
	c, _ := env.Clients(t)
	_, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// create creates the custom resource of doc in ns, named name.
func create(t *testing.T, kind, ns, doc, name string) {
	t.Helper()
	_, dyn := env.Clients(t)
	u := object(t, doc)
	u.SetName(name)
	if _, err := dyn.Resource(gvr(kind)).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s/%s: %v", kind, ns, name, err)
	}
}

// update edits the latest version of a custom resource, again when the control plane's
// status write got in between.
func update(t *testing.T, kind, ns, name string, edit func(u *unstructured.Unstructured) error) {
	t.Helper()
	_, dyn := env.Clients(t)
	ri := dyn.Resource(gvr(kind)).Namespace(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := ri.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := edit(cur); err != nil {
			return err
		}
		_, err = ri.Update(context.Background(), cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating %s %s/%s: %v", kind, ns, name, err)
	}
}
