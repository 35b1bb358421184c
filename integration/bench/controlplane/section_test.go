package controlplane

import (
	"testing"
	"time"
)

func TestMedianStartIsTheMiddleReadyTime(t *testing.T) {
	start := func(extauth, proxy int) StartFigures {
		return StartFigures{ReadyExtauth: time.Duration(extauth) * time.Millisecond, ReadyProxy: time.Duration(proxy) * time.Millisecond}
	}
	for _, c := range []struct {
		starts []StartFigures
		want   time.Duration
	}{
		{[]StartFigures{start(100, 900)}, 900 * time.Millisecond},
		// Judged by the later of the two roles: 2.5 s, 1.9 s, 2.1 s.
		{[]StartFigures{start(2500, 2000), start(1500, 1900), start(1800, 2100)}, 2100 * time.Millisecond},
		// Even: the lower of the two middle ones.
		{[]StartFigures{start(10, 40), start(10, 30), start(10, 20), start(10, 10)}, 20 * time.Millisecond},
	} {
		if got := medianStart(c.starts).Ready(); got != c.want {
			t.Errorf("medianStart(%v).Ready() = %s, want %s", c.starts, got, c.want)
		}
	}
}

func TestOpFigures(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{opTime(31670 * time.Nanosecond), "32 µs"},
		{opTime(3070288 * time.Nanosecond), "3.1 ms"},
		{opTime(603 * time.Millisecond), "603 ms"},
		{opBytes(21564), "21 KB"},
		{opBytes(4938919), "4.7 MB"},
		{opBytes(0), "0 KB"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
