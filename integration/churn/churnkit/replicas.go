package churnkit

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// replicas asks each extauth replica directly, as the gateway would, what it answers
// for a route: how an AuthConfig edit's window is found to end on every replica, not
// only on the one that answered first.
type replicas struct {
	clients []authv3.AuthorizationClient
	conns   []*grpc.ClientConn
	// answered counts, per replica, the Checks sent straight that were answered, so
	// that those can be told from the gateway's in the replica's metrics.
	answered []atomic.Int64
	// out says, per replica, that it is out of the gateway's rotation: its process
	// exited, or a new one has not yet been sent a Check by the gateway.
	out []atomic.Bool
}

func dialReplicas(addrs []string) (*replicas, error) {
	r := &replicas{answered: make([]atomic.Int64, len(addrs)), out: make([]atomic.Bool, len(addrs))}
	for _, a := range addrs {
		conn, err := grpc.NewClient(a, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			r.close()
			return nil, err
		}
		r.conns = append(r.conns, conn)
		r.clients = append(r.clients, authv3.NewAuthorizationClient(conn))
	}
	return r, nil
}

func (r *replicas) close() {
	for _, c := range r.conns {
		c.Close()
	}
}

// check sends replica k the Check of route i's request q and records the verdict as
// the status the gateway would answer (200 allowed, 403 denied).
func (r *replicas) check(ctx context.Context, k, i int, q Req) Record {
	h := map[string]string{":method": "GET", ":path": "/", ":authority": Host(i)}
	if q.Key != NoKey {
		h[KeyHeader] = fmt.Sprintf("k%d", q.Key)
	}
	rec := Record{Route: i, Req: q, Replica: k + 1, Poll: true, Sent: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := r.clients[k].Check(ctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "GET", Path: "/", Host: Host(i), Scheme: "http", Headers: h,
		}},
		ContextExtensions: map[string]string{"config_id": fmt.Sprintf("%s.a-%05d", Namespace, i)},
	}})
	rec.Recv = time.Now()
	switch {
	case err != nil:
		rec.Err = err.Error()
	case code.Code(resp.GetStatus().GetCode()) == code.Code_OK:
		rec.Status = http.StatusOK
	default:
		rec.Status = http.StatusForbidden
	}
	if err == nil {
		r.answered[k].Add(1)
	}
	return rec
}
