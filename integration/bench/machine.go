package main

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strings"
)

// machine describes where the figures were taken.
type machine struct {
	CPUs      int    // usable CPUs, as nproc counts them
	CPUModel  string // first "model name" of /proc/cpuinfo
	GoVersion string // the toolchain that built the servers, with GOOS/GOARCH
}

func describeMachine(ctx context.Context) (machine, error) {
	out, err := output(ctx, "", "go", "env", "GOVERSION", "GOOS", "GOARCH")
	if err != nil {
		return machine{}, err
	}
	goVersion := strings.Join(strings.Fields(out), " ")
	if v := strings.Fields(out); len(v) == 3 {
		goVersion = v[0] + " " + v[1] + "/" + v[2]
	}
	return machine{CPUs: runtime.NumCPU(), CPUModel: cpuModel("/proc/cpuinfo"), GoVersion: goVersion}, nil
}

// cpuModel is the first "model name" in path, or "unknown".
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
