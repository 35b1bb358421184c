package churnkit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// requestTimeout bounds one request: far above any answer the gateway gives, so a slow
// machine is not taken for a failed request.
const requestTimeout = 30 * time.Second

// client sends the workload's requests to the gateway, over kept-alive connections.
type client struct {
	gateway, token string
	http           *http.Client
}

func newClient(gateway, token string) *client {
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: time.Minute}
	return &client{gateway: gateway, token: token, http: &http.Client{Transport: tr, Timeout: requestTimeout}}
}

// do sends r to route i and records when it went, when the answer came, and the answer.
func (c *client) do(ctx context.Context, i int, r Req) Record {
	rec := Record{Route: i, Req: r}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.gateway+"/", nil)
	if err != nil {
		rec.Err = err.Error()
		return rec
	}
	req.Host = Host(i)
	if r.Key != NoKey {
		req.Header.Set(KeyHeader, fmt.Sprintf("k%d", r.Key))
	}
	if r.Token {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	rec.Sent = time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		rec.Recv, rec.Err = time.Now(), err.Error()
		return rec
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rec.Recv, rec.Status = time.Now(), resp.StatusCode
	return rec
}

// recorder keeps every record of a run.
type recorder struct {
	mu      sync.Mutex
	records []Record
}

func (r *recorder) add(rec Record) {
	r.mu.Lock()
	r.records = append(r.records, rec)
	r.mu.Unlock()
}

func (r *recorder) all() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.records...)
}
