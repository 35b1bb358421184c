package xdsclient_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsfleet"
	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

// acceptAndClose listens on loopback and counts connections, closing each at once.
func acceptAndClose(t *testing.T) (addr string, attempts *atomic.Int32) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	attempts = &atomic.Int32{}
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			attempts.Add(1)
			c.Close()
		}
	}()
	return lis.Addr().String(), attempts
}

// outage runs a client against addr (where nothing answers) for d, with the reconnect
// waits given and its log to log.
func outage(t *testing.T, addr string, d, minBackoff, maxBackoff time.Duration, log zerolog.Logger) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	err := xdsclient.Run(ctx, xdsclient.Options{
		Addr: addr, Role: xds.RoleExtauth, Types: []string{xds.ExtAuthConfigType}, NodeID: "test-node",
		Handle:     func(string, map[string]*anypb.Any) error { return nil },
		MinBackoff: minBackoff, MaxBackoff: maxBackoff, Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// For the first QuickRetry of an outage the client tries again every MinBackoff
// (jittered to half of it at least): a restarted control plane is found as soon as it
// is back. With waits doubling from 100 ms, two seconds bring six attempts at most;
// at 100 ms, at least twenty.
func TestAnOutageIsRetriedAtTheShortestWaitAtFirst(t *testing.T) {
	addr, attempts := acceptAndClose(t)
	outage(t, addr, 2*time.Second, 100*time.Millisecond, 10*time.Second, zerolog.Nop())
	if n := attempts.Load(); n < 15 {
		t.Errorf("%d connection attempts in two seconds of an outage with MinBackoff 100 ms, want at least 15", n)
	}
}

// An outage is logged as a warning once while it is retried quickly; the quick
// attempts are debug lines, so a restart of the control plane does not fill the log.
func TestAnOutageWarnsOnceWhileItIsRetriedQuickly(t *testing.T) {
	addr, attempts := acceptAndClose(t)
	var buf syncbuf.Buffer
	outage(t, addr, time.Second, 20*time.Millisecond, time.Second, zerolog.New(&buf).Level(zerolog.DebugLevel))
	warn, debug := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if !strings.Contains(line, "control plane stream ended") {
			continue
		}
		switch {
		case strings.Contains(line, `"level":"warn"`):
			warn++
		case strings.Contains(line, `"level":"debug"`):
			debug++
		}
	}
	if warn != 1 || debug < 5 {
		t.Errorf("%d warnings and %d debug lines for one outage of %d attempts; want 1 warning, the rest debug:\n%s", warn, debug, attempts.Load(), buf.String())
	}
}

// Regression: the documented reconnect waits (MinBackoff to MaxBackoff) governed only
// when the client opened a new stream; the gRPC connection under it kept gRPC's own
// backoff (1 s, growing 1.6 times up to 2 minutes), so a stream opened sooner failed
// at once and a control plane back after a few seconds was found only at gRPC's next
// attempt. Counting connection attempts to an address that accepts and closes each
// one: with waits of 10 to 40 ms, a second brings dozens; gRPC's own backoff, two.
func TestReconnectsFollowTheBackoffOptions(t *testing.T) {
	addr, attempts := acceptAndClose(t)
	outage(t, addr, time.Second, 10*time.Millisecond, 40*time.Millisecond, zerolog.Nop())
	if n := attempts.Load(); n < 8 {
		t.Errorf("%d connection attempts in a second with waits of 10 to 40 ms, want at least 8", n)
	}
}

// The fan-out bench's fleet waits as extauth's client does: its QuickRetry is ours.
func TestTheFleetRetriesAsThisClient(t *testing.T) {
	if xdsfleet.QuickRetry != xdsclient.QuickRetry {
		t.Errorf("xdsfleet.QuickRetry = %s, want xdsclient.QuickRetry %s", xdsfleet.QuickRetry, xdsclient.QuickRetry)
	}
}
