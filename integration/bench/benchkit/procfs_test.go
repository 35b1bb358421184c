package benchkit

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestCPUWatchSince(t *testing.T) {
	w, err := WatchOthers(os.Getpid())
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

func TestReadMem(t *testing.T) {
	m, err := ReadMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.File <= 0 || m.File > m.RSS || m.Peak < m.RSS {
		t.Errorf("ReadMem(self) = %+v: want 0 < RssFile ≤ VmRSS ≤ VmHWM", m)
	}
}

func TestChildNamed(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if got, err := ChildNamed("sleep"); err != nil || got != cmd.Process.Pid {
		t.Errorf("ChildNamed(sleep) = %d, %v; want %d", got, err, cmd.Process.Pid)
	}
	if got, err := ChildNamed("no-such-child"); err == nil {
		t.Errorf("ChildNamed(no-such-child) = %d, want an error", got)
	}
	st, err := ReadProcStat(cmd.Process.Pid)
	if err != nil || st.PPID != os.Getpid() || st.Comm != "sleep" {
		t.Errorf("ReadProcStat(child) = %+v, %v: want comm sleep, parent %d", st, err, os.Getpid())
	}
}
