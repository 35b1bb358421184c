package loader

import (
	"context"
	"encoding/gob"
	"fmt"
	"io"
	"plugin"
	"sync"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
)

// WorkerArgs put the gatehouse binary in isolation-worker mode: the hidden
// `gatehouse plugin __worker` command.
var WorkerArgs = []string{"plugin", "__worker"}

// ServeWorker is the child side of a Worker: it opens the plugin at path, builds and
// starts its service with config, then answers requests from conn until conn closes.
// A panic in Authorize is an error answer; anything that ends the process (a panic on
// a goroutine the plugin started, running out of memory) ends only this worker.
func ServeWorker(ctx context.Context, conn io.ReadWriter, path, symbol string, config []byte) error {
	p, err := plugin.Open(path)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	ep, problem, fix := lookup(p, symbol)
	if problem != "" {
		return fmt.Errorf("worker: %s; fix: %s", problem, fix)
	}
	svc, err := pluginhost.NewService(ctx, ep, config)
	if err == nil {
		err = pluginhost.Start(ctx, svc)
	}
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	var mu sync.Mutex // one message at a time on conn
	enc, dec := gob.NewEncoder(conn), gob.NewDecoder(conn)
	reply := func(r workerResponse) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(r)
	}
	// A first answer (ID 0) says the service started, so the parent knows it is up.
	reply(workerResponse{})
	for {
		var req workerRequest
		if err := dec.Decode(&req); err != nil {
			return nil // the parent closed the socket or went away
		}
		go func() { reply(authorizeInWorker(ctx, svc, req)) }()
	}
}

func authorizeInWorker(ctx context.Context, svc pluginapi.AuthService, req workerRequest) (out workerResponse) {
	out.ID = req.ID
	if !req.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, req.Deadline)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			out = workerResponse{ID: req.ID, Err: fmt.Sprintf("panic: %v", p)}
		}
	}()
	r := req.Req
	r.State = map[string]any{}
	decodeState(req.State, r.State)
	resp, err := svc.Authorize(ctx, &r)
	if err != nil {
		return workerResponse{ID: req.ID, Err: err.Error()}
	}
	return workerResponse{ID: req.ID, Resp: resp, State: encodeState(r.State)}
}
