// Package readiness_test runs extauth, the control plane and the gateway as separate
// gatehouse processes and checks when extauth says it is ready, how it stops, and that
// a rolling restart of extauth behind the gateway fails no request.
package readiness_test

import (
	"os"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestMain removes the binaries and plugins these tests built once they are done.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
