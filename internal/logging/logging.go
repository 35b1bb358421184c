// Package logging sets up zerolog JSON logs with the level from LOG_LEVEL, changeable at
// run time through the admin endpoint.
package logging

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rs/zerolog"
)

// Levels are the accepted log levels.
var Levels = []string{"debug", "info", "warn", "error", "panic", "fatal"}

// TimeFormat is how log lines give their time: RFC 3339 in UTC with milliseconds,
// enough to put the lines of one second (a start, an edit reaching the clients) in
// order and to see how long each step took.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// DefaultLevel applies when LOG_LEVEL is unset.
const DefaultLevel = "info"

// ParseLevel accepts one of Levels, case-insensitively.
func ParseLevel(s string) (zerolog.Level, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, l := range Levels {
		if s == l {
			return zerolog.ParseLevel(s)
		}
	}
	return zerolog.NoLevel, fmt.Errorf("log level %q: use one of %s", s, strings.Join(Levels, ", "))
}

// New returns a JSON logger on w tagged with component, at the level LOG_LEVEL names.
func New(w io.Writer, component string) (zerolog.Logger, error) {
	name := os.Getenv("LOG_LEVEL")
	if name == "" {
		name = DefaultLevel
	}
	lvl, err := ParseLevel(name)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("LOG_LEVEL: %w", err)
	}
	zerolog.SetGlobalLevel(lvl)
	zerolog.TimeFieldFormat = TimeFormat
	ctx := zerolog.New(w).With().Timestamp()
	if component != "" {
		ctx = ctx.Str("component", component)
	}
	return ctx.Logger(), nil
}

// SetLevel changes the level of every logger.
func SetLevel(name string) error {
	lvl, err := ParseLevel(name)
	if err != nil {
		return err
	}
	zerolog.SetGlobalLevel(lvl)
	return nil
}

// Level is the current level's name.
func Level() string { return zerolog.GlobalLevel().String() }
