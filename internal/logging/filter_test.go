package logging_test

import (
	"bytes"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/internal/logging"
)

// TestFilter: every line, or only the JSON lines at error level and above.
func TestFilter(t *testing.T) {
	in := `{"level":"info","message":"a"}
{"level":"error","message":"b"}
not json
{"level":"warn","message":"c"}
{"level":"fatal","message":"d"}
`
	tests := []struct {
		name       string
		errorsOnly bool
		want       string
	}{
		{"all", false, in},
		{"errors only", true, "{\"level\":\"error\",\"message\":\"b\"}\n{\"level\":\"fatal\",\"message\":\"d\"}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := logging.Filter(&out, strings.NewReader(in), tt.errorsOnly); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}
