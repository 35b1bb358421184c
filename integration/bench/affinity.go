package main

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
)

// allCPUs is the taskset list of every CPU, such as "0-1".
func allCPUs() string { return fmt.Sprintf("0-%d", runtime.NumCPU()-1) }

// setAffinity moves every thread of pid onto cpus (a taskset list). Threads started
// later inherit the affinity of the thread that starts them.
func setAffinity(ctx context.Context, pid int, cpus string) error {
	_, err := output(ctx, "", "taskset", "-a", "-c", "-p", cpus, strconv.Itoa(pid))
	return err
}

// pinPhase puts the servers of ph and their companions on cpus.
func pinPhase(ctx context.Context, ph phase, cpus string) error {
	if !canPin() {
		return nil
	}
	pids := []int{ph.bare.proc.cmd.Process.Pid, ph.gatehouse.proc.cmd.Process.Pid}
	for _, c := range ph.companions {
		pids = append(pids, c.pid)
	}
	for _, pid := range pids {
		if err := setAffinity(ctx, pid, cpus); err != nil {
			return err
		}
	}
	return nil
}
