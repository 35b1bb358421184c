package pluginload

import (
	"os"
	"os/exec"
	"testing"
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
			if got := trialArgs(cmd.Process.Pid); got != tc.want {
				t.Errorf("trialArgs(sh %q) = %q, want %q", tc.args, got, tc.want)
			}
		})
	}
	if n := readChars(os.Getpid()); n <= 0 {
		t.Errorf("readChars(self) = %d, want the bytes this test read", n)
	}
}
