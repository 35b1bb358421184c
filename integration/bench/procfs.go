package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStat is what the bench reads of a /proc/<pid>/stat line.
type procStat struct {
	comm  string // command name, at most 15 bytes
	state byte   // R, S, D, Z, …
	ppid  int
}

// parseProcStat reads the command name, state and parent of a /proc/<pid>/stat line.
// The name is in parentheses and may itself hold spaces and parentheses.
func parseProcStat(stat string) (procStat, error) {
	i, j := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if i < 0 || j < i {
		return procStat{}, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(stat[j+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("no state and parent after the command name in %q", stat)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("parent pid: %w", err)
	}
	return procStat{comm: stat[i+1 : j], state: f[0][0], ppid: ppid}, nil
}

func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(b))
}

// pids lists the processes in /proc.
func pids() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// childNamed is the pid of the one child of this process whose command name is
// name, such as the redis-server the harness started.
func childNamed(name string) (int, error) {
	all, err := pids()
	if err != nil {
		return 0, err
	}
	found := 0
	for _, pid := range all {
		st, err := readProcStat(pid)
		if err != nil || st.ppid != os.Getpid() || st.comm != name {
			continue
		}
		if found != 0 {
			return 0, fmt.Errorf("more than one %s started by the bench (%d, %d)", name, found, pid)
		}
		found = pid
	}
	if found == 0 {
		return 0, fmt.Errorf("no %s started by the bench in /proc", name)
	}
	return found, nil
}
