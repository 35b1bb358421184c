package integration_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/server"
)

// TestSpareTrial follows the spare trial-load child of a running `gatehouse extauth`
// (loader.TrialSpare): a plugin that panics in its init code, dropped into the watched
// folder, ends the spare that trial-loaded it and is refused with the panic, the server
// keeps serving and starts another spare; a good plugin then serves; and when the
// server is killed, its spare goes with it.
func TestSpareTrial(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	good, panics := buildGoodAndInitPanic(t)
	dir := t.TempDir()
	config := srvAuthConfig("good", "required_header", "required_header.so", "Plugin", srvGoodStep) +
		srvAuthConfig("panics", "initpanic", "initpanic.so", "Plugin", srvGoodStep)
	s := startSrv(t, gatehouse, dir, config)
	first := waitSpare(t, s, 0)

	t.Run("a plugin that panics in init ends only the spare", func(t *testing.T) {
		srvInstall(t, panics, dir, "initpanic.so")
		waitInitPanicRefused(t, s)
		if s.proc.Exited() {
			t.Fatalf("gatehouse extauth exited:\n%s", s.proc.Output())
		}
		if spareAlive(first) {
			t.Errorf("the spare %d that trial-loaded initpanic.so still runs", first)
		}
		waitSpare(t, s, first)
	})

	t.Run("a good plugin dropped in serves", func(t *testing.T) {
		next := waitSpare(t, s, first)
		srvInstall(t, good, dir, "required_header.so")
		waitGoodServes(t, s)
		if st := s.statuses(t)["default.good"]; st.State != server.StateAccepted {
			t.Errorf("default.good status %+v, want Accepted", st)
		}
		if spareAlive(next) {
			t.Errorf("the spare %d waiting before required_header.so appeared still runs: it was not used", next)
		}
		waitSpare(t, s, next)
	})

	t.Run("the spare does not outlive a server that is killed", func(t *testing.T) {
		spare := waitSpare(t, s, 0)
		s.proc.Kill()
		testbin.Eventually(t, 5*time.Second, func() error {
			if spareAlive(spare) {
				return fmt.Errorf("the spare %d still runs after its server was killed", spare)
			}
			return nil
		})
	})
}

// waitSpare waits until the server has a spare trial-load child other than not (0:
// any) and returns its pid.
func waitSpare(t *testing.T, s *srvProc, not int) int {
	t.Helper()
	var pid int
	testbin.Eventually(t, 10*time.Second, func() error {
		pid = spareOf(s.proc.Pid())
		if pid == 0 || pid == not {
			return fmt.Errorf("gatehouse extauth (pid %d) has no spare trial-load child other than %d", s.proc.Pid(), not)
		}
		return nil
	})
	return pid
}

// spareOf is the pid of parent's child `gatehouse plugin __trial --request-stdin`, or 0.
func spareOf(parent int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !spareAlive(pid) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		_, after, _ := strings.Cut(string(stat), ") ")
		if f := strings.Fields(after); len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		return pid
	}
	return 0
}

// spareAlive reports whether pid runs (not a zombie) as a spare trial-load child.
func spareAlive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	if _, after, _ := strings.Cut(string(stat), ") "); strings.HasPrefix(after, "Z") {
		return false
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return err == nil && bytes.Contains(cmdline, []byte("\x00__trial\x00")) && bytes.Contains(cmdline, []byte("\x00--request-stdin"))
}

// TestTrialAfterBinaryReplaced upgrades the gatehouse binary in place under a running
// `gatehouse extauth`: its trial-load children must still be this process's binary
// (/proc/self/exe), whose package hashes the server has, not whatever file now has its
// path. The new file here is a script that fails, so a trial run from the path would
// not give initpanic.so's panic as the reason.
func TestTrialAfterBinaryReplaced(t *testing.T) {
	good, panics := buildGoodAndInitPanic(t)
	bin := filepath.Join(t.TempDir(), "gatehouse")
	data, err := os.ReadFile(testbin.Gatehouse(t))
	if err != nil {
		t.Fatal(err)
	}
	abiWrite(t, bin, string(data))
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	config := srvAuthConfig("good", "required_header", "required_header.so", "Plugin", srvGoodStep) +
		srvAuthConfig("panics", "initpanic", "initpanic.so", "Plugin", srvGoodStep)
	s := startSrv(t, bin, dir, config)
	first := waitSpare(t, s, 0)

	// The upgrade: a new file renamed over the binary's path, as package managers do.
	next := bin + ".new"
	abiWrite(t, next, "#!/bin/sh\necho 'not the binary the server runs' >&2\nexit 3\n")
	if err := os.Chmod(next, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, bin); err != nil {
		t.Fatal(err)
	}

	srvInstall(t, good, dir, "required_header.so") // trial-loaded by the spare started before
	waitGoodServes(t, s)
	waitSpare(t, s, first) // started after the upgrade

	srvInstall(t, panics, dir, "initpanic.so")
	waitInitPanicRefused(t, s)
}

// buildGoodAndInitPanic builds plugins/required_header and the initpanic test plugin,
// whose init code panics, and returns their files.
func buildGoodAndInitPanic(t *testing.T) (good, panics string) {
	t.Helper()
	b := newABIBuilds(t)
	t.Run("build", func(t *testing.T) {
		t.Run("required_header", func(t *testing.T) { t.Parallel(); good = b.build(t, requiredHeader) })
		t.Run("initpanic", func(t *testing.T) { t.Parallel(); panics = b.build(t, testdataPlugin("initpanic")) })
	})
	if t.Failed() {
		t.FailNow()
	}
	return good, panics
}

// waitInitPanicRefused waits until default.panics is refused with initpanic.so's panic,
// which only a trial load in a gatehouse child can report.
func waitInitPanicRefused(t *testing.T, s *srvProc) {
	t.Helper()
	want := "trial load: the plugin panicked while loading (init code runs when the plugin is opened); it printed:\npanic: initpanic: cannot reach the license server"
	testbin.Eventually(t, 20*time.Second, func() error {
		if st := s.statuses(t)["default.panics"]; !strings.Contains(st.Reason, want) {
			return fmt.Errorf("default.panics: %+v; want a reason holding %q", st, want)
		}
		return nil
	})
}

// waitGoodServes waits until default.good allows a request with the required header.
func waitGoodServes(t *testing.T, s *srvProc) {
	t.Helper()
	testbin.Eventually(t, 20*time.Second, func() error {
		if got := s.verdict(t, "default.good", map[string]string{"x-required": "alpha"}); !cmp.Equal(got, srvMatched) {
			return fmt.Errorf("default.good: %v, want allowed", got)
		}
		return nil
	})
}
