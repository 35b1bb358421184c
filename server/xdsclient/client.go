// Package xdsclient is a delta ADS client of the Gatehouse control plane. It subscribes
// to every resource of the types it is given, keeps the full current set of each type
// across deltas and reconnects, hands that set to a handler after each response, and
// ACKs or NACKs the response with what the handler says.
package xdsclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/anypb"
)

// MaxMessageSize bounds one xDS response. The route configuration is one resource
// holding every VirtualService, which gRPC's default of 4 MiB can be too small for, so
// the client accepts far more, as Envoy does.
const MaxMessageSize = 256 << 20

// Options configure Run.
type Options struct {
	// Addr is the control plane's ADS address, e.g. 127.0.0.1:9977.
	Addr string
	// NodeID names this process to the control plane; unique per process. Empty means
	// "<hostname>-<pid>".
	NodeID string
	// Role is put in the node metadata under xds.RoleKey; it decides what is served.
	Role string
	// Serving, when set, is put in the node metadata of each stream under
	// xds.ServingKey: whether this process answers requests as the stream opens.
	Serving func() bool
	// Types are the type URLs subscribed to, each as a wildcard delta subscription.
	Types []string
	// Credentials secure the connection (mutual TLS); nil is plain text.
	Credentials credentials.TransportCredentials
	// Log receives connection changes and NACKs.
	Log zerolog.Logger
	// Handle gets, after each response, the full current set of resources of that type
	// as the server has sent them. A nil error ACKs; an error NACKs that response with
	// err.Error() as error_detail (the client still records what the server sent; the
	// handler keeps whatever it serves).
	Handle func(typeURL string, resources map[string]*anypb.Any) error
	// Applied, when set, is called after each Handle with the version the server gave
	// every resource of the type and what Handle returned (nil: ACKed).
	Applied func(typeURL string, versions map[string]string, err error)

	// MinBackoff and MaxBackoff bound the wait before reconnecting (defaults 250ms, 15s),
	// with jitter: MinBackoff for the first QuickRetry of an outage, then doubling on
	// every failed attempt; it starts again from MinBackoff once a stream has received
	// a response.
	MinBackoff, MaxBackoff time.Duration
}

// Default reconnect waits.
const (
	DefaultMinBackoff = 250 * time.Millisecond
	DefaultMaxBackoff = 15 * time.Second
)

// QuickRetry is how long after its stream breaks a client keeps trying again every
// MinBackoff before the waits grow. A control plane that restarts (a crash, a rolling
// update) is back within seconds, and every wait past its return delays the changes
// made meanwhile; with doubling waits from the first failure, a client found a control
// plane back after half a second up to a second later. An attempt while nothing
// listens costs one refused connection.
const QuickRetry = 5 * time.Second

// Run connects to the control plane and follows it until ctx ends, reconnecting with
// exponential backoff and jitter whenever the stream breaks. What was received is kept
// across reconnects and announced as initial_resource_versions, so the server resends
// only what changed; a disconnect never calls Handle, so the handler never sees an empty
// set because the control plane went away. It returns nil when ctx ends.
func Run(ctx context.Context, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	creds := o.Credentials
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	// The connection under the stream reconnects with the same waits as the stream:
	// with gRPC's own (from 1 s up to 2 minutes), a stream opened sooner would fail at
	// once and a control plane that is back would be found only at gRPC's next attempt.
	conn, err := grpc.NewClient(o.Addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: o.MinBackoff, Multiplier: 2, Jitter: 0.2, MaxDelay: o.MaxBackoff},
			MinConnectTimeout: 20 * time.Second,
		}))
	if err != nil {
		return fmt.Errorf("xdsclient: %s: %w", o.Addr, err)
	}
	defer conn.Close()
	c := &client{o: o, conn: conn, state: newState(o.Types), log: o.Log.With().Str("xds", o.Addr).Logger()}
	wait := o.MinBackoff
	var broke time.Time // when the outage began: the stream broke, or the first attempt failed
	for {
		got, err := c.stream(ctx)
		if ctx.Err() != nil {
			return nil
		}
		began := got || broke.IsZero()
		if began {
			broke, wait = time.Now(), o.MinBackoff
		}
		d := jitter(wait)
		// The outage's first failure and every one past QuickRetry are warnings; the
		// quick attempts between them (a few a second) are debug lines.
		ev := c.log.Warn()
		if !began && time.Since(broke) < QuickRetry {
			ev = c.log.Debug()
		}
		ev.Err(err).Dur("retry_in", d).Dur("down", time.Since(broke).Round(time.Millisecond)).Msg("control plane stream ended; serving what was received")
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(d):
		}
		wait = nextWait(wait, time.Since(broke), o)
		// The connection under the stream waits by itself after a failed attempt
		// (the same waits, doubling): the next stream is opened now, not at its time.
		conn.ResetConnectBackoff()
	}
}

// nextWait is the wait after one of wait when the outage has lasted down.
func nextWait(wait, down time.Duration, o Options) time.Duration {
	if down < QuickRetry {
		return o.MinBackoff
	}
	return min(2*wait, o.MaxBackoff)
}

func (o *Options) check() error {
	if o.Addr == "" {
		return errors.New("xdsclient: no control plane address")
	}
	if len(o.Types) == 0 {
		return errors.New("xdsclient: no type URLs to subscribe to")
	}
	if o.Handle == nil {
		return errors.New("xdsclient: no Handle")
	}
	if o.NodeID == "" {
		host, _ := os.Hostname()
		o.NodeID = host + "-" + strconv.Itoa(os.Getpid())
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	return nil
}

// jitter spreads d over [d/2, d) so that clients cut off together do not come back
// together.
func jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + rand.N(half+1)
}
