package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// xdsLink is how the measuring ADS clients reach the control plane: directly (the
// zero value), or each through a relay of this process that speaks plain text or,
// with certs set, mutual TLS to it. xdsbench's watcher dials plain text only; the
// relay is where its client side of mutual TLS runs, with the configuration
// mtls.ClientCredentials carries.
type xdsLink struct {
	relay bool
	// certs is an mtls.Generate output folder: the control plane serves with its
	// controlplane folder, and each client presents its role's folder.
	certs string
}

// serverArgs are the control plane's flags for l.
func (l xdsLink) serverArgs() []string {
	if l.certs == "" {
		return nil
	}
	return []string{"--xds-tls-dir", filepath.Join(l.certs, mtls.RoleControlplane)}
}

// dial is the address a client of role dials to reach the control plane at target,
// and the relay to close with it (nil when direct).
func (l xdsLink) dial(role, target string) (string, io.Closer, error) {
	if !l.relay {
		return target, nil, nil
	}
	var cfg *tls.Config
	if l.certs != "" {
		dir := filepath.Join(l.certs, mtls.RoleExtauth)
		if role != xds.RoleExtauth {
			dir = filepath.Join(l.certs, "proxy-"+proxyName(role))
		}
		f, err := mtls.LoadAs(dir, role, zerolog.Nop())
		if err != nil {
			return "", nil, err
		}
		cfg = mtls.ClientConfig(f, mtls.RoleControlplane)
		cfg.NextProtos = []string{"h2"} // as gRPC's TLS credentials ask, and its server requires
	}
	r, err := startRelay(target, cfg)
	if err != nil {
		return "", nil, err
	}
	return r.ln.Addr().String(), r, nil
}

// proxyName is the proxy's name in a proxy role "namespace~name".
func proxyName(role string) string { return role[strings.LastIndexByte(role, '~')+1:] }

// relay accepts connections on 127.0.0.1 and pipes each to target, over TLS with cfg
// when it is not nil.
type relay struct {
	ln     net.Listener
	target string
	cfg    *tls.Config

	mu    sync.Mutex
	conns map[net.Conn]bool
}

func startRelay(target string, cfg *tls.Config) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	r := &relay{ln: ln, target: target, cfg: cfg, conns: map[net.Conn]bool{}}
	go r.serve()
	return r, nil
}

func (r *relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		go r.pipe(c)
	}
}

// pipe connects c to the target and copies both ways until either side ends.
func (r *relay) pipe(c net.Conn) {
	up, err := net.Dial("tcp", r.target)
	if err != nil {
		c.Close()
		return
	}
	if r.cfg != nil {
		t := tls.Client(up, r.cfg)
		if err := t.Handshake(); err != nil {
			up.Close()
			c.Close()
			return
		}
		up = t
	}
	if !r.track(c, up) {
		return
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, c)
		up.Close()
		close(done)
	}()
	_, _ = io.Copy(c, up)
	c.Close()
	<-done
	r.mu.Lock()
	delete(r.conns, c)
	delete(r.conns, up)
	r.mu.Unlock()
}

// track remembers c and up for Close, or closes them when the relay is closed.
func (r *relay) track(c, up net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		c.Close()
		up.Close()
		return false
	}
	r.conns[c], r.conns[up] = true, true
	return true
}

// Close stops accepting and ends every piped connection.
func (r *relay) Close() error {
	err := r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.conns {
		c.Close()
	}
	r.conns = nil
	return err
}
