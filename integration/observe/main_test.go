// Package observe_test checks, on the real gatehouse binary, what extauth tells the
// tools people run: spans joined to the caller's trace over OTLP, decision records,
// and the metrics the chart's dashboard and alerts query.
package observe_test

import (
	"os"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestMain removes the binaries and plugins these tests built once they are done.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
