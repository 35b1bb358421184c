// Command bareserver is the floor `make bench` compares gatehouse against: an
// envoy.service.auth.v3.Authorization server that answers every Check with OK and
// does nothing else. It registers reflection, as gatehouse does, so ghz can find the
// method without a .proto file.
//
//	bareserver -listen 127.0.0.1:9000
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
)

// okResponse is shared by every Check: gRPC only reads it while encoding.
var okResponse = &authv3.CheckResponse{Status: &rpcstatus.Status{Code: int32(code.Code_OK)}}

type bare struct {
	authv3.UnimplementedAuthorizationServer
}

// Check allows every request without looking at it.
func (bare) Check(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	return okResponse, nil
}

// newServer returns the gRPC server with the bare Authorization service and reflection.
func newServer() *grpc.Server {
	s := grpc.NewServer()
	authv3.RegisterAuthorizationServer(s, bare{})
	reflection.Register(s)
	return s
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "gRPC address")
	flag.Parse()
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bareserver: %v\n", err)
		os.Exit(1)
	}
	s := newServer()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		s.Stop()
	}()
	fmt.Fprintf(os.Stderr, "bareserver: listening on %s\n", lis.Addr())
	if err := s.Serve(lis); err != nil {
		fmt.Fprintf(os.Stderr, "bareserver: %v\n", err)
		os.Exit(1)
	}
}
