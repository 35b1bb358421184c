package server_test

import (
	"bytes"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/server"
	"github.com/rs/zerolog"
)

// Regression (issue 12, finding 3): hot reloads grew the process by a few MB each
// without a word. Every version opened is logged, a warning comes past
// WarnPluginVersions, and past --max-plugin-versions health checks say NOT_SERVING,
// once.
func TestPluginOpenedHook(t *testing.T) {
	var buf bytes.Buffer
	notServing := 0
	hook := server.PluginOpened(zerolog.New(&buf), server.WarnPluginVersions+2, func() { notServing++ })
	for n := 1; n <= server.WarnPluginVersions+5; n++ {
		hook("/auth-plugins/p.so", "abc", n)
	}
	out := buf.String()
	if got := strings.Count(out, `"message":"plugin version opened"`); got != server.WarnPluginVersions+5 {
		t.Errorf("%d versions logged, want %d", got, server.WarnPluginVersions+5)
	}
	if got := strings.Count(out, `"message":"many plugin versions loaded`); got != 5 {
		t.Errorf("%d warnings, want 5 (past %d)", got, server.WarnPluginVersions)
	}
	if notServing != 1 || strings.Count(out, "reporting NOT_SERVING") != 1 {
		t.Errorf("NOT_SERVING reported %d times (log: %d), want once", notServing, strings.Count(out, "reporting NOT_SERVING"))
	}
	buf.Reset()
	never := server.PluginOpened(zerolog.New(&buf), 0, func() { t.Error("NOT_SERVING with --max-plugin-versions 0") })
	never("/auth-plugins/p.so", "abc", 1000)
}
