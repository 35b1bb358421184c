package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// cpuClock turns /proc clock ticks into time.
type cpuClock struct {
	tick time.Duration // one clock tick, 10ms when CLK_TCK is 100
}

// newCPUClock asks getconf for CLK_TCK.
func newCPUClock(ctx context.Context) (cpuClock, error) {
	out, err := output(ctx, "", "getconf", "CLK_TCK")
	if err != nil {
		return cpuClock{}, err
	}
	hz, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || hz <= 0 {
		return cpuClock{}, fmt.Errorf("getconf CLK_TCK: %q is not a positive number", strings.TrimSpace(out))
	}
	return cpuClock{tick: time.Second / time.Duration(hz)}, nil
}

// used is the CPU time (user + system, all threads) process pid has used so far.
func (c cpuClock) used(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := parseStatCPU(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(ticks) * c.tick, nil
}

// machineBusy is the CPU time all CPUs of the machine have spent busy so far.
func (c cpuClock) machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	ticks, err := parseMachineBusy(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/stat: %w", err)
	}
	return time.Duration(ticks) * c.tick, nil
}

// parseMachineBusy sums the busy columns of the "cpu" line of /proc/stat: user, nice,
// system, irq, softirq and steal (guest time is already inside user and nice).
func parseMachineBusy(stat string) (uint64, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("first line %q is not the cpu total", line)
	}
	var busy uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu column %d: %w", i, err)
		}
		busy += v
	}
	return busy, nil
}

// parseStatCPU returns utime+stime, in clock ticks, from a /proc/<pid>/stat line.
// The command name (field 2) is in parentheses and may itself hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStatCPU(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	// After ')': field 3 (state) onwards; utime and stime are fields 14 and 15.
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("only %d fields after the command name", len(f))
	}
	utime, err := strconv.ParseUint(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseUint(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return utime + stime, nil
}
