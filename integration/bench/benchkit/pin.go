package benchkit

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// The process under test runs on ServerCPU, the bench's load and clients on ClientCPU,
// so that on a 2-core machine the client's work does not show up as the server's.
const (
	ServerCPU = "1"
	ClientCPU = "0"
)

// CanPin reports whether there are the two CPUs pinning needs.
func CanPin() bool { return runtime.NumCPU() >= 2 }

// AllCPUs is the taskset list of every CPU, such as "0-1".
func AllCPUs() string { return fmt.Sprintf("0-%d", runtime.NumCPU()-1) }

// Pinned is bin and args run under `taskset -c cpu` when pinning is possible.
func Pinned(cpu, bin string, args ...string) (string, []string) {
	if !CanPin() {
		return bin, args
	}
	return "taskset", append([]string{"-c", cpu, bin}, args...)
}

// SetAffinity moves every thread of pid onto cpus (a taskset list); threads started
// later inherit it.
func SetAffinity(ctx context.Context, pid int, cpus string) error {
	_, err := Output(ctx, "", "taskset", "-a", "-c", "-p", cpus, strconv.Itoa(pid))
	return err
}

// PinClients moves this process (the bench's clients) onto ClientCPU and returns what
// puts it back, reporting (not failing on) an error doing so. It does nothing on a
// machine that cannot pin.
func PinClients(ctx context.Context) (func(), error) {
	if !CanPin() {
		return func() {}, nil
	}
	pid := os.Getpid()
	out, err := Output(ctx, "", "taskset", "-c", "-p", strconv.Itoa(pid))
	if err != nil {
		return nil, err
	}
	// "pid 123's current affinity list: 0,1"
	_, was, ok := strings.Cut(strings.TrimSpace(out), "list: ")
	if !ok || was == "" {
		return nil, fmt.Errorf("taskset -c -p %d: unexpected output %q", pid, out)
	}
	if err := SetAffinity(ctx, pid, ClientCPU); err != nil {
		return nil, err
	}
	return func() {
		if err := SetAffinity(context.Background(), pid, was); err != nil {
			Progress("restoring this process's CPU affinity: %v", err)
		}
	}, nil
}
