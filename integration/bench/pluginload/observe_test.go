package pluginload

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestTrialArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"spare", []string{"__trial", "--request-stdin"}, "spare"},
		{"trial", []string{"__trial", "x.so"}, "trial"},
		{"other", []string{"serve"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// sh waits on its stdin with tc.args in its command line.
			cmd := exec.Command("sh", append([]string{"-c", "read x", "sh"}, tc.args...)...)
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Skip(err)
			}
			defer func() { in.Close(); _ = cmd.Wait() }()
			// Until the child has exec'd sh, its command line is this test's.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid)); strings.HasPrefix(string(b), "sh\x00") {
					break
				}
			}
			if got := trialArgs(cmd.Process.Pid); got != tc.want {
				t.Errorf("trialArgs(sh %q) = %q, want %q", tc.args, got, tc.want)
			}
		})
	}
	if n := readChars(os.Getpid()); n <= 0 {
		t.Errorf("readChars(self) = %d, want the bytes this test read", n)
	}
}
