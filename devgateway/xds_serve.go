package devgateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Serve serves the Envoy listener on port (HTTPPort, HTTPSPort, ...) on lis until ctx
// ends. Until that listener has a complete config every request is answered 503; a TLS
// listener's connections are TLS, with the certificate of the filter chain the client's
// server name selects. When ctx ends it stops accepting and returns once the requests
// in flight have finished (at most 5 s).
func (p *Proxy) Serve(ctx context.Context, port uint32, lis net.Listener) error {
	slot, ok := p.ports[port]
	if !ok {
		return fmt.Errorf("devgateway: port %d is not one of the gateway's ports %v", port, p.portList())
	}
	srv := &http.Server{
		Handler:           &portHandler{p: p, slot: slot},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(p.log.With().Uint32("port", port).Logger(), "", 0),
	}
	drained := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(drained)
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
	})
	err := srv.Serve(&switchListener{Listener: lis, slot: slot})
	// Serve returns as soon as Shutdown closes the listener; return only once the
	// requests in flight are drained, so whoever waits on Serve can then stop what is
	// behind the gateway.
	if !stop() {
		<-drained
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

type portHandler struct {
	p    *Proxy
	slot *atomic.Pointer[listenerTable]
}

func (h *portHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var t *table
	if lt := h.slot.Load(); lt != nil && lt.tls == (r.TLS != nil) {
		sni := ""
		if r.TLS != nil {
			sni = r.TLS.ServerName
		}
		if c := lt.chainFor(sni); c != nil {
			t = c.t
		}
	}
	h.p.eng.serve(t, w, r)
}

// switchListener hands out TLS connections while the port's listener is a TLS one.
type switchListener struct {
	net.Listener
	slot *atomic.Pointer[listenerTable]
}

func (l *switchListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if lt := l.slot.Load(); lt == nil || !lt.tls {
		return c, nil
	}
	return tls.Server(c, &tls.Config{
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if lt := l.slot.Load(); lt != nil && lt.tls {
				if c := lt.chainFor(hello.ServerName); c != nil && c.cert != nil {
					return c.cert, nil
				}
			}
			return nil, fmt.Errorf("no filter chain for server name %q", hello.ServerName)
		},
	}), nil
}
