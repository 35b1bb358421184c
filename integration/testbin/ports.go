package testbin

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// FreeAddr returns a 127.0.0.1 address with a port that was free a moment ago and that
// no other FreeAddr (or harness.FreePort) of this process returned. The port is below
// the kernel's ephemeral range (listenBelowEphemeral).
func FreeAddr(t testing.TB) string {
	t.Helper()
	addr, err := ports.free(listenBelowEphemeral)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// listenBelowEphemeral listens on a random free port below the kernel's ephemeral
// range. A port of that range ("127.0.0.1:0") may be handed to another process's
// outgoing connection or listener between FreeAddr's check and the test's own bind
// (make test runs the integration packages as parallel processes), and the test's
// bind then fails with "address already in use". Below the range, only another test's
// FreeAddr picks ports, at random among thousands.
func listenBelowEphemeral() (net.Listener, error) {
	low := ephemeralLow()
	var err error
	for range 100 {
		port := max(1024, low-12000) + rand.IntN(min(12000, low-1024))
		var l net.Listener
		if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			return l, nil
		}
	}
	return nil, fmt.Errorf("testbin: no free port below %d: %w", low, err)
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's default,
// 32768, where it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var low, high int
	if _, err := fmt.Sscan(string(b), &low, &high); err != nil || low <= 2048 {
		return 32768
	}
	return low
}

// ports are the ports FreeAddr returned in this process. Once its listener is closed,
// the kernel may hand the same port out again, and two of one test's addresses on one
// port would leave one of its processes unable to listen.
var ports = &handedOut{seen: map[int]bool{}}

type handedOut struct {
	mu   sync.Mutex
	seen map[int]bool
}

// free is the address of a listener listen opens (and free closes) on a port not
// returned before.
func (h *handedOut) free(listen func() (net.Listener, error)) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for range 1000 {
		l, err := listen()
		if err != nil {
			return "", err
		}
		addr := l.Addr().(*net.TCPAddr)
		l.Close()
		if !h.seen[addr.Port] {
			h.seen[addr.Port] = true
			return addr.String(), nil
		}
	}
	return "", errors.New("testbin: every free port the kernel offered was handed out before")
}
