// Package fanout_test runs the real `gatehouse controlplane` with a few dozen real
// delta ADS streams (simulated gateway proxies and extauth replicas, controlplane/xds/
// xdsfleet) and counts what they hold: after a burst of edits, with a client that
// stops reading, and through a reconnect storm. Timings are `make bench`'s (the
// fanout section), never asserted here.
package fanout_test

import (
	"os"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
