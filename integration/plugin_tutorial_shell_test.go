package integration_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// tutorialWait bounds what the tutorial waits for: dev's first build (which tidies and
// pins the module) and each rebuild, on a machine that may be shared. Nothing is timed
// here; integration/bench times the loop.
const tutorialWait = 3 * time.Minute

// tutorialShell runs the console commands of docs/plugins.md's tutorial as the reader
// types them, in one working directory. The command ending in " &" is `gatehouse dev`,
// started on free ports (the page's localhost:8080 is replaced by the gateway's address)
// and stopped by `kill %1`. While it runs, a `sed -i` is a save: it runs once and the
// shell waits until dev has logged the build's outcome (built and checked, or failed);
// any other command is repeated until it prints exactly what the page shows, as a
// reader waits for the log line before looking.
type tutorialShell struct {
	t         *testing.T
	cwd, home string
	env       []string

	dev    *testbin.Process
	gw     string
	devLog string // where the page's dev command writes its log
}

// run runs one step and returns what it printed, with the working directory shown as
// /home/me.
func (sh *tutorialShell) run(s testbin.ConsoleStep) string {
	t := sh.t
	t.Helper()
	cmd := s.Command
	switch {
	case strings.HasPrefix(cmd, "cd "):
		sh.cwd = filepath.Join(sh.cwd, strings.TrimPrefix(cmd, "cd "))
		return ""
	case strings.HasSuffix(cmd, " &"):
		sh.startDev(strings.TrimSuffix(cmd, " &"))
		return ""
	case cmd == "kill %1":
		if sh.dev == nil {
			t.Fatal("kill %1 with no gatehouse dev started")
		}
		if err := sh.dev.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		sh.dev.Wait(t, 30*time.Second)
		return ""
	case sh.dev != nil && !sh.dev.Exited() && strings.HasPrefix(cmd, "sed -i "):
		before := sh.outcomes()
		got := sh.exec(cmd, s.Output)
		testbin.Eventually(t, tutorialWait, func() error {
			if n := sh.outcomes(); n <= before {
				return fmt.Errorf("$ %s: dev logged no build outcome after the save", cmd)
			}
			return nil
		})
		return got
	case sh.dev != nil && !sh.dev.Exited():
		var got string
		testbin.Eventually(t, tutorialWait, func() error {
			got, _ = sh.output(strings.ReplaceAll(cmd, "localhost:8080", sh.gw))
			if got != s.Output {
				return fmt.Errorf("$ %s printed %q, the page shows %q", cmd, got, s.Output)
			}
			return nil
		})
		return got
	default:
		return sh.exec(cmd, s.Output)
	}
}

// exec runs cmd once: it must succeed and print the lines want shows, in order.
func (sh *tutorialShell) exec(cmd, want string) string {
	got, err := sh.output(cmd)
	if err != nil {
		sh.t.Fatalf("$ %s: %v\n%s", cmd, err, got)
	}
	if missing := missingLines(want, got); missing != "" {
		sh.t.Errorf("$ %s: the output lacks the page's line %q (in order); it printed:\n%s", cmd, missing, got)
	}
	return got
}

func (sh *tutorialShell) output(cmd string) (string, error) {
	c := exec.Command("bash", "-c", cmd)
	c.Dir, c.Env = sh.cwd, append(os.Environ(), sh.env...)
	out, err := c.CombinedOutput()
	return strings.ReplaceAll(string(out), sh.home, "/home/me"), err
}

// startDev starts the page's gatehouse dev command with free ports added.
func (sh *tutorialShell) startDev(cmd string) {
	t := sh.t
	if !strings.HasPrefix(cmd, "gatehouse dev ") {
		t.Fatalf("the background command %q is not gatehouse dev", cmd)
	}
	_, log, ok := strings.Cut(cmd, "2> ")
	if !ok {
		t.Fatalf("%q: the test follows dev's log through the page's 2> redirection", cmd)
	}
	sh.devLog = filepath.Join(sh.cwd, strings.Fields(log)[0])
	sh.gw = testbin.FreeAddr(t)
	ports := fmt.Sprintf(" --listen %s --extauth-listen %s --echo-listen %s", sh.gw, testbin.FreeAddr(t), testbin.FreeAddr(t))
	sh.dev = testbin.Start(t, sh.env, "bash", "-c", "cd "+sh.cwd+" && exec "+cmd+ports)
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(sh.devLog)
			t.Logf("dev's log:\n%s", log)
		}
	})
	testbin.WaitTCP(t, sh.dev, sh.gw, tutorialWait)
}

// outcomes counts the builds dev has finished, published or not.
func (sh *tutorialShell) outcomes() int {
	log, _ := os.ReadFile(sh.devLog)
	return strings.Count(string(log), `"message":"plugin built and checked`) +
		strings.Count(string(log), `"message":"plugin build failed`) +
		strings.Count(string(log), `"message":"plugin built but would not load`)
}
