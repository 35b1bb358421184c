// Package churn_test runs a short churn of issue 26 through separate processes (the
// control plane, two extauth replicas, the gateway, an upstream) and counts wrong
// answers; `make bench` times the long one (integration/bench/churn).
package churn_test

import (
	"os"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestMain removes the binaries and plugins these tests built once they are done.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
