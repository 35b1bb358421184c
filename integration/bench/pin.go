package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// The control-plane section runs the process under test on one CPU and this process
// (the measuring ADS clients, the file edits) on the other, so that on a 2-core
// machine the client's work does not show up as the server's latency.
const (
	serverCPU = "1"
	clientCPU = "0"
)

// canPin reports whether there are the two CPUs pinning needs.
func canPin() bool { return runtime.NumCPU() >= 2 }

// pinSelf moves every thread of this process onto cpus (a taskset list) and returns
// how to put them back where they were. Threads started later inherit the affinity
// of the thread that starts them.
func pinSelf(ctx context.Context, cpus string) (restore func() error, err error) {
	pid := strconv.Itoa(os.Getpid())
	out, err := output(ctx, "", "taskset", "-c", "-p", pid)
	if err != nil {
		return nil, err
	}
	// "pid 123's current affinity list: 0,1"
	_, was, ok := strings.Cut(strings.TrimSpace(out), "list: ")
	if !ok || was == "" {
		return nil, fmt.Errorf("taskset -c -p %s: unexpected output %q", pid, out)
	}
	if _, err := output(ctx, "", "taskset", "-a", "-c", "-p", cpus, pid); err != nil {
		return nil, err
	}
	return func() error {
		_, err := output(context.Background(), "", "taskset", "-a", "-c", "-p", was, pid)
		return err
	}, nil
}

// pinned is args run under `taskset -c cpu` when pinning is possible.
func pinned(cpu, bin string, args ...string) (string, []string) {
	if !canPin() {
		return bin, args
	}
	return "taskset", append([]string{"-c", cpu, bin}, args...)
}

// pinClients pins this process (the bench's clients) to clientCPU and returns what
// puts its affinity back, reporting (not failing on) an error doing so.
func pinClients(ctx context.Context) (func(), error) {
	restore, err := pinSelf(ctx, clientCPU)
	if err != nil {
		return nil, err
	}
	return func() {
		if err := restore(); err != nil {
			progress("restoring this process's CPU affinity: " + err.Error())
		}
	}, nil
}
