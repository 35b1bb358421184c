package xdsclient

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"gatehouse.dev/gatehouse/server"
)

// A NACK's detail has one line per rejected config, each reason cut at its bound, and
// stops at its own bound with a count of the configs left out.
func TestNackDetailIsBounded(t *testing.T) {
	long := strings.Repeat("é", maxReasonBytes) // two bytes a rune: a cut must not split one
	tests := []struct {
		name      string
		rejected  int
		reason    string
		wantLines int // 0: as many as fit, then the count of the rest
	}{
		{name: "a few short reasons", rejected: 3, reason: "plugin file missing.so not found", wantLines: 3},
		{name: "a reason of several lines is folded and cut", rejected: 1, reason: "first\nsecond\n" + long, wantLines: 1},
		{name: "too many to list", rejected: 2 * maxDetailBytes / maxReasonBytes, reason: long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sts []server.Status
			for i := range tt.rejected {
				sts = append(sts, server.Status{ID: fmt.Sprintf("default.c-%05d", i), State: server.StateRejected, Reason: tt.reason})
			}
			sts = append(sts, server.Status{ID: "default.fine", State: server.StateAccepted})
			err := nackDetail(sts)
			if err == nil {
				t.Fatal("no NACK detail for rejected configs")
			}
			d := err.Error()
			if len(d) > maxDetailBytes {
				t.Errorf("detail of %d bytes, bound %d", len(d), maxDetailBytes)
			}
			lines := strings.Split(d, "\n")
			if tt.wantLines > 0 && len(lines) != tt.wantLines {
				t.Errorf("%d lines, want %d", len(lines), tt.wantLines)
			}
			for _, l := range lines {
				if strings.Contains(l, "default.fine") {
					t.Errorf("an Accepted config is in the NACK: %q", l)
				}
				if !utf8.ValidString(l) || len(l) > maxReasonBytes+len("default.c-00000: ") {
					t.Errorf("line of %d bytes (valid UTF-8: %t): %.80q", len(l), utf8.ValidString(l), l)
				}
			}
			last := lines[len(lines)-1]
			if more := strings.HasPrefix(last, "(and "); more != (tt.wantLines == 0) {
				t.Errorf("last line %.80q; want a count of the rest: %t", last, tt.wantLines == 0)
			} else if listed := len(lines) - 1; more && !strings.Contains(last, fmt.Sprintf("(and %d more", tt.rejected-listed)) {
				t.Errorf("last line %q does not count the %d configs left out", last, tt.rejected-listed)
			}
		})
	}
	if err := nackDetail([]server.Status{{ID: "default.fine", State: server.StateAccepted}}); err != nil {
		t.Errorf("NACK detail %q with nothing rejected", err)
	}
}
