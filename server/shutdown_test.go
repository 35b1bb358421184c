package server_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"

	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// Regression: on SIGTERM the server waited silently for the Checks in flight, as long
// as their deadline (a stuck step holds a Check that long). Shutdown says what it
// waits for and cuts what is left after its timeout.
func TestShutdownDrainIsLoggedAndBounded(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	stuck := funcStep{name: "step/stuck", fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		entered <- struct{}{}
		<-release
		return pluginapi.Allow(), nil
	}}
	reg := registryOf(t, time.Hour, map[string][]chain.Step{"ns.stuck": {stuck}})
	t.Cleanup(func() { close(release) }) // before registryOf's cleanup waits for the call
	logs := &syncbuf.Buffer{}
	a := server.NewAuthorizer(reg, zerolog.New(logs), nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewGRPCServer(a)
	served := make(chan error, 1)
	go func() { served <- s.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	checked := make(chan error, 1)
	go func() {
		_, err := authv3.NewAuthorizationClient(conn).Check(context.Background(), checkRequest("ns.stuck", nil))
		checked <- err
	}()
	<-entered

	server.Shutdown(s, a, 50*time.Millisecond, zerolog.New(logs))
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if err := <-checked; err == nil {
		t.Errorf("the Check held by the stuck step was not cut")
	}
	out := logs.String()
	for _, want := range []string{
		`"checks_in_flight":{"ns.stuck":1}`,
		`"message":"stopping: waiting for the Checks in flight"`,
		`"message":"stopping: Checks still in flight after the drain timeout are cut"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

func TestShutdownWithNothingInFlight(t *testing.T) {
	reg := registryOf(t, time.Minute, map[string][]chain.Step{"ns.a": {requiredHeader("x", "1")}})
	logs := &syncbuf.Buffer{}
	a := server.NewAuthorizer(reg, zerolog.New(logs), nil)
	client := grpcClientWith(t, a)
	if _, err := client.Check(context.Background(), checkRequest("ns.a", map[string]string{"x": "1"})); err != nil {
		t.Fatal(err)
	}
	if got := a.InFlight(); len(got) != 0 {
		t.Errorf("InFlight after the Check = %v, want none", got)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewGRPCServer(a)
	go func() { _ = s.Serve(lis) }()
	server.Shutdown(s, a, time.Minute, zerolog.New(logs))
	if logs.String() != "" {
		t.Errorf("Shutdown with nothing in flight logged:\n%s", logs)
	}
}
