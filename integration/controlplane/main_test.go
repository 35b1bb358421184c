package controlplane_test

import (
	"os"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestMain removes the binaries and plugins these tests built once they are done.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
