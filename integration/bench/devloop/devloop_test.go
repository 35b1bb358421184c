package devloop

import (
	"testing"
	"time"
)

// The build and check shares come from dev's log line; a field it does not give, or a
// line that is not JSON, counts as not seen rather than failing the run.
func TestLogDuration(t *testing.T) {
	line := `{"level":"info","module":"/tmp/m","took":"812ms","build":"603ms","check":"96ms","message":"` + msgBuilt + `"}`
	for _, tc := range []struct {
		line, field string
		want        time.Duration
	}{
		{line, "build", 603 * time.Millisecond},
		{line, "check", 96 * time.Millisecond},
		{line, "link", 0},
		{"plugin built", "build", 0},
	} {
		if got := logDuration(tc.line, tc.field); got != tc.want {
			t.Errorf("logDuration(%q, %q) = %s, want %s", tc.line, tc.field, got, tc.want)
		}
	}
}
