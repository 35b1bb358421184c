package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// Regression: OIDC step lines carried "step":"oidc" twice (the wiring and oidc.New
// each added it), which breaks log pipelines that reject duplicate JSON keys.
func TestOIDCStepLogHasOneStepField(t *testing.T) {
	var buf bytes.Buffer
	b := extauthBuilder(zerolog.New(&buf), nil)
	// What oidc.New does with the logger it is given.
	log := b.OIDC.Log.With().Str("step", "oidc").Logger()
	log.Info().Msg("login")
	if n := strings.Count(buf.String(), `"step":`); n != 1 {
		t.Errorf("an OIDC step log line has %d step fields, want 1: %s", n, buf.String())
	}
}
