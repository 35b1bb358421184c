package kubetest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
)

// PodNetwork stands in for the cluster's pod network, which needs nodes and a CNI
// plugin this machine does not have. The API server reaches pods through it: it is the
// kube-apiserver's proxy (HTTP_PROXY=socks5://…, which Go's HTTP client dials through
// with SOCKS5, naming the destination), so when the API server proxies a request to a
// Service (/api/v1/namespaces/NS/services/NAME:PORT/proxy/...) it chose the endpoint
// with its own code (EndpointSlices, the Pod the endpoint names, the Pod's IPs) and
// asks PodNetwork to connect to that pod IP and port, which PodNetwork does to the
// loopback address the test routed them to. Nothing else is connected.
//
// Endpoint and Pod IPs cannot be loopback addresses (the API server refuses them), so a
// test gives its pod an IP of a private range and routes it here.
type PodNetwork struct {
	lis net.Listener

	mu     sync.Mutex
	routes map[string]string // "<pod ip>:<port>" → loopback "<host>:<port>"
}

func startPodNetwork() (*PodNetwork, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n := &PodNetwork{lis: lis, routes: map[string]string{}}
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go n.serve(c)
		}
	}()
	return n, nil
}

// Addr is the SOCKS5 proxy's address.
func (n *PodNetwork) Addr() string { return n.lis.Addr().String() }

// Route sends the connections the API server opens to podAddr ("10.244.0.10:9091") to
// the loopback address to.
func (n *PodNetwork) Route(podAddr, to string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.routes[podAddr] = to
}

// serve answers one SOCKS5 client (RFC 1928): no authentication, CONNECT to an IPv4
// address only, which must be routed.
func (n *PodNetwork) serve(c net.Conn) {
	defer c.Close()
	dest, err := socksConnect(c)
	if err != nil {
		return
	}
	n.mu.Lock()
	to, ok := n.routes[dest]
	n.mu.Unlock()
	var up net.Conn
	if ok {
		up, err = net.Dial("tcp", to)
	}
	if !ok || err != nil {
		_, _ = c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0}) // connection refused
		return
	}
	defer up.Close()
	if _, err := c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// socksConnect reads the greeting and the CONNECT request and returns "<ip>:<port>".
func socksConnect(c net.Conn) (string, error) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(c, head); err != nil || head[0] != 5 {
		return "", errors.New("not SOCKS5")
	}
	if _, err := io.ReadFull(c, make([]byte, head[1])); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		return "", err
	}
	req := make([]byte, 4+4+2) // VER CMD RSV ATYP, an IPv4 address, the port
	if _, err := io.ReadFull(c, req[:4]); err != nil {
		return "", err
	}
	if req[1] != 1 || req[3] != 1 {
		_, _ = c.Write([]byte{5, 8, 0, 1, 0, 0, 0, 0, 0, 0}) // address type not supported
		return "", fmt.Errorf("SOCKS5 command %d, address type %d: only CONNECT to IPv4", req[1], req[3])
	}
	if _, err := io.ReadFull(c, req[4:]); err != nil {
		return "", err
	}
	ip := net.IP(req[4:8])
	return net.JoinHostPort(ip.String(), strconv.Itoa(int(binary.BigEndian.Uint16(req[8:])))), nil
}

func (n *PodNetwork) close() {
	if n != nil {
		_ = n.lis.Close()
	}
}
