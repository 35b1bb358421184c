package logging_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/internal/logging"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in   string
		want zerolog.Level
	}{
		{"debug", zerolog.DebugLevel},
		{"info", zerolog.InfoLevel},
		{"warn", zerolog.WarnLevel},
		{"error", zerolog.ErrorLevel},
		{"panic", zerolog.PanicLevel},
		{"fatal", zerolog.FatalLevel},
		{"DEBUG", zerolog.DebugLevel},
		{" Warn ", zerolog.WarnLevel},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := logging.ParseLevel(tt.in)
			if err != nil {
				t.Fatalf("ParseLevel(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseLevel(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseLevelRejects(t *testing.T) {
	for _, in := range []string{"", "trace", "disabled", "warning", "verbose", "1"} {
		t.Run(in, func(t *testing.T) {
			_, err := logging.ParseLevel(in)
			if err == nil {
				t.Fatalf("ParseLevel(%q) = nil error, want one", in)
			}
			if want := "use one of debug, info, warn, error, panic, fatal"; !strings.Contains(err.Error(), want) {
				t.Errorf("ParseLevel(%q) error = %q, want it to contain %q", in, err, want)
			}
		})
	}
}

// setGlobal restores zerolog's global level, which New and SetLevel change.
func setGlobal(t *testing.T) {
	old := zerolog.GlobalLevel()
	t.Cleanup(func() { zerolog.SetGlobalLevel(old) })
}

func TestNew(t *testing.T) {
	tests := []struct {
		name      string
		env       string
		wantLevel string
		wantErr   bool
	}{
		{name: "unset is info", env: "", wantLevel: "info"},
		{name: "debug", env: "debug", wantLevel: "debug"},
		{name: "error", env: "ERROR", wantLevel: "error"},
		{name: "bad value", env: "loud", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setGlobal(t)
			t.Setenv("LOG_LEVEL", tt.env)
			var buf bytes.Buffer
			log, err := logging.New(&buf, "extauth")
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "LOG_LEVEL") {
					t.Fatalf("New with LOG_LEVEL=%q: error %v, want one naming LOG_LEVEL", tt.env, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := logging.Level(); got != tt.wantLevel {
				t.Errorf("Level() = %q, want %q", got, tt.wantLevel)
			}
			log.Error().Msg("hello")
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("log line %q is not JSON: %v", buf.String(), err)
			}
			if line["component"] != "extauth" || line["message"] != "hello" || line["level"] != "error" {
				t.Errorf("log line = %v, want component extauth, message hello, level error", line)
			}
		})
	}
}

func TestSetLevel(t *testing.T) {
	setGlobal(t)
	if err := logging.SetLevel("warn"); err != nil {
		t.Fatalf("SetLevel(warn): %v", err)
	}
	if got := logging.Level(); got != "warn" {
		t.Errorf("Level() = %q after SetLevel(warn)", got)
	}
	var buf bytes.Buffer
	log := zerolog.New(&buf)
	log.Info().Msg("dropped")
	if buf.Len() != 0 {
		t.Errorf("info line written at level warn: %q", buf.String())
	}
	if err := logging.SetLevel("chatty"); err == nil {
		t.Errorf("SetLevel(chatty) = nil error")
	}
	if got := logging.Level(); got != "warn" {
		t.Errorf("Level() = %q after a rejected SetLevel, want warn unchanged", got)
	}
}
