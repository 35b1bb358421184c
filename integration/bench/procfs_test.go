package main

import "testing"

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       procStat
		wantErr    bool
	}{
		{
			name: "plain",
			stat: "4242 (redis-server) S 17 4242 4242 0 -1 4194560 1200 0 0 0 731 95 0 0 20 0 9 0\n",
			want: procStat{comm: "redis-server", state: 'S', ppid: 17},
		},
		{
			name: "command name with spaces and parentheses",
			stat: "18 (a) b (c) Z 9 18 18 0 -1 0\n",
			want: procStat{comm: "a) b (c", state: 'Z', ppid: 9},
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
