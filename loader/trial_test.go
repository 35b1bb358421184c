package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/loader"
)

// The parent side of a trial load, run against shell scripts that behave like the
// gatehouse child does in each situation. The child side is exercised with real plugins
// through the gatehouse binary in integration/abi_test.go.
func TestPluginTrialRunner(t *testing.T) {
	const copyPath = "/tmp/gatehouse-plugins-1/abc.so"
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
		want    []loader.Finding
		stage   string
		// starts is set when the script starts a process that must not survive it.
		starts bool
	}{
		{
			name:   "loads",
			script: `echo '{"ok":true,"symbolType":"main.p","configType":"*main.Config"}' >&3`,
		},
		{
			name:   "loads, leaving a process behind",
			script: `sleep 300 >/dev/null 2>&1 & echo $! > "$PIDFILE"; echo '{"ok":true}' >&3`,
			starts: true,
		},
		{
			name:   "a failure it reports, naming the user's file",
			script: `echo '{"stage":"lookup","error":"loader: /tmp/gatehouse-plugins-1/abc.so: no exported symbol \"Plugin\"","fix":"export it"}' >&3; exit 1`,
			want: []loader.Finding{{Severity: "error", Check: "trial load (lookup)",
				Detail: `/auth-plugins/x.so: no exported symbol "Plugin"`, Fix: "export it"}},
			stage: "lookup",
		},
		{
			name:   "a panic in init",
			script: `echo 'panic: boom' >&2; echo >&2; echo 'goroutine 1 [running]:' >&2; echo 'main.init.0()' >&2; echo 'plugin.open({0x1, 0x2})' >&2; echo '	/usr/local/go/src/plugin/plugin_dlopen.go:95' >&2; exit 2`,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the plugin panicked while loading (init code runs when the plugin is opened); it printed:\npanic: boom\n\ngoroutine 1 [running]:\nmain.init.0()\n… (2 more lines)",
				Fix:    "fix the panic shown in the output; package-level variables and init functions run when the plugin is opened"}},
			stage: "crash",
		},
		{
			name:   "a fatal runtime error",
			script: `echo 'fatal error: runtime: no plugin module data' >&2; exit 2`,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the Go runtime aborted while opening the plugin; it printed:\nfatal error: runtime: no plugin module data",
				Fix:    "see the output; the pre-flight findings usually name the cause (another Go release crashes like this)"}},
			stage: "crash",
		},
		{
			name:   "killed by a signal",
			script: `echo 'opening /tmp/gatehouse-plugins-1/abc.so'; kill -SEGV $$`,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the plugin crashed the process that loaded it (signal: segmentation fault); it printed:\nopening /auth-plugins/x.so",
				Fix:    "see the output; a crash while opening usually means a toolchain mismatch the pre-flight could not see, or a fault in the plugin's init code"}},
			stage: "crash",
		},
		{
			name:   "not a gatehouse binary",
			script: `echo 'unknown command "plugin"' >&2; exit 1`,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the process that loaded the plugin exited with exit status 1 before reporting; it printed:\nunknown command \"plugin\"",
				Fix:    "see the output; if SCRIPT is not the gatehouse binary, set the trial executable to one"}},
			stage: "crash",
		},
		{
			name:   "loads, with the opening marker first",
			script: `echo '{"opening":true}' >&3; echo '{"ok":true}' >&3`,
		},
		{
			// Regression: this was reported as "exited … before reporting; if … is not
			// the gatehouse binary, set the trial executable", pointing away from the
			// plugin.
			name:   "init code that calls os.Exit",
			script: `echo '{"opening":true}' >&3; echo 'license check failed' >&2; exit 3`,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the plugin exited the process while it was being opened (exit code 3): its init code (package-level variables, init functions) calls os.Exit or log.Fatal; it printed:\nlicense check failed",
				Fix:    "remove the os.Exit or log.Fatal from the plugin's init code; report a problem from NewConfigInstance, GetAuthService or Start instead"}},
			stage: "crash",
		},
		{
			name:   "init code that calls os.Exit(0)",
			script: `echo '{"opening":true}' >&3; exit 0`,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the plugin ended the process while it was being opened, with exit code 0: its init code calls os.Exit",
				Fix:    "remove the os.Exit from the plugin's init code; report a problem from NewConfigInstance, GetAuthService or Start instead"}},
			stage: "crash",
		},
		{
			name:    "a hang, with a child of its own",
			script:  `sleep 300 & echo $! > "$PIDFILE"; echo 'waiting for the license server'; sleep 300`,
			timeout: 300 * time.Millisecond,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the plugin did not finish loading within 300ms and was killed; it printed:\nwaiting for the license server",
				Fix:    "find what blocks in the plugin's init code (package-level variables, init functions) or NewConfigInstance; they must not wait on the network or a lock"}},
			stage:  "timeout",
			starts: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "gatehouse")
			pidFile := filepath.Join(dir, "pid")
			t.Setenv("PIDFILE", pidFile)
			write(t, script, []byte("#!/bin/sh\n"+tt.script+"\n"))
			if err := os.Chmod(script, 0o755); err != nil {
				t.Fatal(err)
			}
			r := loader.TrialRunner{Executable: script, Timeout: tt.timeout}
			start := time.Now()
			got, res := r.Run(context.Background(), "/auth-plugins/x.so", copyPath, "Plugin", nil, false)
			for i := range tt.want {
				tt.want[i].Fix = strings.ReplaceAll(tt.want[i].Fix, "SCRIPT", script)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if res == nil || res.Stage != tt.stage {
				t.Errorf("result %+v; want stage %q", res, tt.stage)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Run took %s", d)
			}
			if tt.starts {
				assertDead(t, pidFile)
			}
		})
	}
}

// assertDead checks that the process whose pid is in pidFile is gone: the trial runner
// kills the child's whole process group.
func assertDead(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the script did not record its child: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d started by the trial child outlived the trial", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs: it exists and is not a zombie waiting to be reaped by
// whichever process inherited it.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

func TestPluginTrialRunnerPassesSymbolAndConfig(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "gatehouse")
	write(t, script, []byte(`#!/bin/sh
echo "$@" > "`+dir+`/args"
cat > "`+dir+`/stdin"
echo '{"ok":true}' >&3
`))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	r := loader.TrialRunner{Executable: script}
	if got, _ := r.Run(context.Background(), "x.so", "/p/x.so", "Custom", []byte(`{"A":1}`), true); len(got) != 0 {
		t.Fatalf("findings %v", got)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	stdin, _ := os.ReadFile(filepath.Join(dir, "stdin"))
	if got, want := strings.TrimSpace(string(args)), "plugin __trial --symbol Custom --result-fd 3 --config-stdin /p/x.so"; got != want {
		t.Errorf("args %q; want %q", got, want)
	}
	if string(stdin) != `{"A":1}` {
		t.Errorf("stdin %q; want the config", stdin)
	}
}
