package server_test

import (
	"testing"

	"github.com/rs/zerolog"
)

// testLogger logs to the test's output, so a failing test shows what the server said.
func testLogger(t *testing.T) zerolog.Logger {
	return zerolog.New(zerolog.TestWriter{T: t})
}
