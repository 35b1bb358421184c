package benchkit

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       uint64
		wantErr    bool
	}{
		{
			name: "plain",
			stat: "4242 (gatehouse) S 1 4242 4242 0 -1 4194560 1200 0 0 0 731 95 0 0 20 0 9 0 123456 1000000 2000 18446744073709551615\n",
			want: 826,
		},
		{
			name: "command name with spaces and parentheses",
			stat: "17 (a) b (c) R 1 17 17 0 -1 0 0 0 0 0 5 7 0 0 20 0 1 0 1 1 1\n",
			want: 12,
		},
		{name: "no command name", stat: "17 a R 1", wantErr: true},
		{name: "cut short", stat: "17 (a) R 1 17 17", wantErr: true},
		{name: "not a number", stat: "17 (a) R 1 17 17 0 -1 0 0 0 0 0 x 7 0", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatCPU(tc.stat)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseStatCPU() error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("parseStatCPU() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestParseMachineBusy(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       uint64
		wantErr    bool
	}{
		{
			name: "total line first",
			stat: "cpu  100 2 30 5000 7 4 5 6 0 0\ncpu0 50 1 15 2500 3 2 2 3 0 0\n",
			want: 100 + 2 + 30 + 4 + 5 + 6,
		},
		{name: "per-CPU line first", stat: "cpu0 50 1 15 2500 3 2 2 3 0 0\n", wantErr: true},
		{name: "too few columns", stat: "cpu  100 2 30\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMachineBusy(tc.stat)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseMachineBusy() error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("parseMachineBusy() = %d, want %d", got, tc.want)
			}
		})
	}
}
func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       ProcStat
		wantErr    bool
	}{
		{
			name: "plain",
			stat: "4242 (redis-server) S 17 4242 4242 0 -1 4194560 1200 0 0 0 731 95 0 0 20 0 9 0\n",
			want: ProcStat{Comm: "redis-server", State: 'S', PPid: 17},
		},
		{
			name: "command name with spaces and parentheses",
			stat: "18 (a) b (c) Z 9 18 18 0 -1 0\n",
			want: ProcStat{Comm: "a) b (c", State: 'Z', PPid: 9},
		},
		{name: "no command name", stat: "17 a R 1", wantErr: true},
		{name: "cut short", stat: "17 (a) R", wantErr: true},
		{name: "parent not a number", stat: "17 (a) R x 17", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcStat(tc.stat)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseProcStat() error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("parseProcStat() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCPUWatchSince(t *testing.T) {
	clock, err := NewClock(context.Background())
	if err != nil {
		t.Skip(err)
	}
	w, err := WatchOthers(clock, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
	}
	others, used, err := w.Since(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(used) != 1 || used[0] <= 0 || others < 0 || others > 1 {
		t.Errorf("Since(0) = %v, %v: want this process's CPU above 0 and a share in [0, 1]", others, used)
	}
}
