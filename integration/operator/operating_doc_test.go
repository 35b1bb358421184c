package operator_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// docStep is one "$ command" of a sh block of docs/operating.md and the output shown
// under it.
type docStep struct {
	cmd        string
	want       []string // nil: output not shown
	background bool
}

// docSteps reads the sh blocks of a walk-through: "$ " starts a command, a heredoc
// runs to its EOF line, other lines are the expected output.
func docSteps(t *testing.T, path string) []docStep {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steps []docStep
	in, heredoc := false, false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case !in && line == "```sh":
			in = true
		case in && line == "```":
			in = false
		case !in:
		case heredoc:
			steps[len(steps)-1].cmd += "\n" + line
			heredoc = line != "EOF"
		case strings.HasPrefix(line, "$ "):
			c := strings.TrimPrefix(line, "$ ")
			s := docStep{cmd: c}
			if strings.HasSuffix(c, " &") {
				s.cmd, s.background = strings.TrimSuffix(c, " &"), true
			}
			heredoc = strings.Contains(c, "<<'EOF'")
			steps = append(steps, s)
		default:
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		}
	}
	return steps
}

// squeeze makes table lines independent of column widths, which change with the
// length of the free ports used in place of the documented ones.
var squeeze = regexp.MustCompile(`-+| +`)

func same(want, got string) bool {
	sq := func(s string) string {
		return squeeze.ReplaceAllStringFunc(s, func(m string) string { return m[:1] })
	}
	return sq(want) == sq(got)
}

// matches compares output lines with the doc's; a "..." line matches any lines.
func matches(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matches(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && same(want[0], got[0]) && matches(want[1:], got[1:])
}

// TestOperatingDoc runs every command of docs/operating.md in order, on free ports
// in place of the documented ones, and compares each output shown with what the
// command prints (polling, as the control plane applies edits asynchronously).
func TestOperatingDoc(t *testing.T) {
	steps := docSteps(t, filepath.Join(testbin.Root(t), "docs", "operating.md"))
	if len(steps) < 10 {
		t.Fatalf("only %d commands found in docs/operating.md", len(steps))
	}
	work := t.TempDir()
	bin := testbin.Gatehouse(t)
	// Documented address → the free one used here; ports also appear alone in YAML.
	addrs := map[string]string{}
	for _, doc := range []string{"127.0.0.1:9977", "127.0.0.1:9091", "127.0.0.1:8080", "127.0.0.1:19000", "127.0.0.1:8090"} {
		addrs[doc] = testbin.FreeAddr(t)
	}
	port := func(a string) string { return a[strings.LastIndex(a, ":")+1:] }
	toTest := func(s string) string {
		for doc, real := range addrs {
			s = strings.ReplaceAll(s, doc, real)
			s = strings.ReplaceAll(s, "port: "+port(doc)+"}", "port: "+port(real)+"}")
		}
		return s
	}
	toDoc := func(s string) string {
		for doc, real := range addrs {
			s = strings.ReplaceAll(s, real, doc)
		}
		return s
	}
	env := []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GATEHOUSE_ADMIN=" + addrs["127.0.0.1:9091"], "GATEHOUSE_PROXY_ADMIN=" + addrs["127.0.0.1:19000"],
	}
	run := func(cmd string) (string, error) {
		c := exec.Command("sh", "-c", cmd)
		c.Dir, c.Env = work, append(os.Environ(), env...)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		err := c.Run()
		return out.String(), err
	}
	for i, s := range steps {
		cmd := toTest(s.cmd)
		t.Logf("$ %s", s.cmd)
		switch {
		case s.background:
			p := startShell(t, work, env, cmd)
			for doc, real := range addrs {
				if strings.Contains(s.cmd, "listen "+doc) {
					testbin.WaitTCP(t, p, real, settle)
				}
			}
		case s.want == nil:
			if out, err := run(cmd); err != nil {
				t.Fatalf("step %d: %s: %v\n%s", i, s.cmd, err, out)
			}
		default:
			testbin.Eventually(t, settle, func() error {
				out, _ := run(cmd)
				got := toDoc(out)
				if !matches(s.want, strings.Split(strings.TrimSuffix(got, "\n"), "\n")) {
					return fmt.Errorf("$ %s: the output differs from the doc's\n--- doc:\n%s\n--- got:\n%s", s.cmd, strings.Join(s.want, "\n"), got)
				}
				return nil
			})
		}
	}
}

// startShell runs cmd with sh in dir as a background process (exec'd, so stopping it
// stops the command).
func startShell(t *testing.T, dir string, env []string, cmd string) *testbin.Process {
	t.Helper()
	if !regexp.MustCompile(`^gatehouse [a-z]`).MatchString(cmd) {
		t.Fatalf("background step %q is not a gatehouse command", cmd)
	}
	return testbin.Start(t, env, "sh", "-c", `cd "$0" && exec `+cmd, dir)
}
