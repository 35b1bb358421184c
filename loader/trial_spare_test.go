package loader_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/loader"
)

// The parent side of a spare trial child, run against shell scripts that behave like
// `gatehouse plugin __trial --request-stdin` does: read one request line, then write the
// opening marker and the result to fd 3. Each script logs how it was started, so a
// test can tell a spare from a child started for the trial.
func TestTrialSpare(t *testing.T) {
	const copyPath = "/tmp/gatehouse-plugins-1/abc.so"
	tests := []struct {
		name string
		// spare is what the script does when started as a spare, after reading its
		// request; cold is what it does when started for one trial.
		spare, cold string
		timeout     time.Duration
		want        []loader.Finding
		stage       string
		// started is how the script was started, in order.
		started []string
		// starts is set when the spare starts a process that must not survive it.
		starts bool
	}{
		{
			name:    "loads in the spare",
			spare:   `echo '{"opening":true}' >&3; echo '{"ok":true,"symbolType":"main.p"}' >&3`,
			started: []string{"spare"},
		},
		{
			name:  "a panic in init ends the spare, not the caller, and is not tried again",
			spare: `echo '{"opening":true}' >&3; echo 'panic: boom' >&2; exit 2`,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the plugin panicked while loading (init code runs when the plugin is opened); it printed:\npanic: boom",
				Fix:    "fix the panic shown in the output; package-level variables and init functions run when the plugin is opened"}},
			stage:   "crash",
			started: []string{"spare"},
		},
		{
			name:  "init code that calls os.Exit in the spare",
			spare: `echo '{"opening":true}' >&3; exit 3`,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the plugin exited the process while it was being opened (exit code 3): its init code (package-level variables, init functions) calls os.Exit or log.Fatal",
				Fix:    "remove the os.Exit or log.Fatal from the plugin's init code; report a problem from NewConfigInstance, GetAuthService or Start instead"}},
			stage:   "crash",
			started: []string{"spare"},
		},
		{
			name:    "a hang in the spare, with a child of its own",
			spare:   `echo '{"opening":true}' >&3; sleep 300 & echo $! > "$PIDFILE"; echo 'waiting for the license server'; sleep 300`,
			timeout: 300 * time.Millisecond,
			want: []loader.Finding{{Severity: "error", Check: "trial load",
				Detail: "the plugin did not finish loading within 300ms and was killed; it printed:\nwaiting for the license server",
				Fix:    "find what blocks in the plugin's init code (package-level variables, init functions) or NewConfigInstance; they must not wait on the network or a lock"}},
			stage:   "timeout",
			started: []string{"spare"},
			starts:  true,
		},
		{
			// No plugin code ran: the trial is not lost, a child is started for it.
			name:    "a spare that ends before it opens the plugin is replaced by a child",
			spare:   `exit 1`,
			cold:    `echo '{"opening":true}' >&3; echo '{"ok":true}' >&3`,
			started: []string{"spare", "cold"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "gatehouse")
			t.Setenv("PIDFILE", filepath.Join(dir, "pid"))
			t.Setenv("DIR", dir)
			write(t, script, []byte(`#!/bin/sh
case " $* " in
*" --request-stdin "*)
	echo spare >> "$DIR/started"
	read -r req || exit 0
	printf '%s\n' "$req" > "$DIR/request"
	`+tt.spare+`
	;;
*)
	echo cold >> "$DIR/started"
	`+tt.cold+`
	;;
esac
`))
			if err := os.Chmod(script, 0o755); err != nil {
				t.Fatal(err)
			}
			spare := &loader.TrialSpare{}
			defer spare.Close()
			r := loader.TrialRunner{Executable: script, Timeout: tt.timeout, Spare: spare}
			if err := spare.Start(r); err != nil {
				t.Fatal(err)
			}
			pid := spare.Pid()
			if pid == 0 {
				t.Fatal("Start left no spare waiting")
			}
			got, res := r.Run(context.Background(), "/auth-plugins/x.so", copyPath, "Plugin", []byte(`{"a":1}`), true)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if res == nil || res.Stage != tt.stage {
				t.Errorf("result %+v; want stage %q", res, tt.stage)
			}
			started, _ := os.ReadFile(filepath.Join(dir, "started"))
			if diff := cmp.Diff(tt.started, strings.Fields(string(started))); diff != "" {
				t.Errorf("children started (-want +got):\n%s", diff)
			}
			var req loader.TrialRequest
			if b, err := os.ReadFile(filepath.Join(dir, "request")); err != nil || json.Unmarshal(b, &req) != nil {
				t.Errorf("the spare got no request: %v %q", err, b)
			} else if want := (loader.TrialRequest{Path: copyPath, Symbol: "Plugin", Config: []byte(`{"a":1}`), WithConfig: true}); !cmp.Equal(req, want) {
				t.Errorf("request %+v; want %+v", req, want)
			}
			if spare.Pid() != 0 {
				t.Errorf("a spare is waiting after the trial; the Loader starts the next one once it has opened the plugin, not Run")
			}
			if alive(pid) {
				t.Errorf("the spare %d was not reaped after its trial", pid)
			}
			if tt.starts {
				assertDead(t, filepath.Join(dir, "pid"))
			}
		})
	}
}

func TestTrialSpareClose(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "gatehouse")
	write(t, script, []byte("#!/bin/sh\nread -r req\necho '{\"ok\":true}' >&3\n"))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	spare := &loader.TrialSpare{}
	r := loader.TrialRunner{Executable: script, Spare: spare}
	if err := spare.Refill(r); err != nil || spare.Pid() != 0 {
		t.Errorf("Refill before Start started a spare (pid %d, %v); only Start asks for one", spare.Pid(), err)
	}
	if err := spare.Start(r); err != nil {
		t.Fatal(err)
	}
	pid := spare.Pid()
	if err := spare.Refill(r); err != nil || spare.Pid() != pid {
		t.Errorf("Refill replaced or added a spare (pid %d, then %d, %v); one waits at a time", pid, spare.Pid(), err)
	}
	spare.Close()
	if alive(pid) {
		t.Errorf("the spare %d outlived Close", pid)
	}
	if err := spare.Start(r); err != nil || spare.Pid() != 0 {
		t.Errorf("Start after Close started a spare (pid %d, %v)", spare.Pid(), err)
	}
	if err := spare.Refill(r); err != nil || spare.Pid() != 0 {
		t.Errorf("Refill after Close started a spare (pid %d, %v)", spare.Pid(), err)
	}
}

// The child side, without a plugin: a closed stdin ends a waiting spare with nothing
// written, and a request is answered as a trial load of its file.
func TestServeSpareTrial(t *testing.T) {
	var out bytes.Buffer
	if err := loader.ServeSpareTrial(context.Background(), strings.NewReader(""), &out); err != nil || out.Len() != 0 {
		t.Errorf("on a closed stdin: %v, wrote %q; want nothing", err, out.String())
	}
	missing := filepath.Join(t.TempDir(), "missing.so")
	req, _ := json.Marshal(loader.TrialRequest{Path: missing, Symbol: "Plugin"})
	if err := loader.ServeSpareTrial(context.Background(), bytes.NewReader(req), &out); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	var opening, res loader.TrialResult
	if err := dec.Decode(&opening); err != nil || !opening.Opening {
		t.Fatalf("first result %+v (%v); want the opening marker", opening, err)
	}
	if err := dec.Decode(&res); err != nil || res.OK || res.Stage != loader.StageOpen || !strings.Contains(res.Error, missing) {
		t.Errorf("result %+v (%v); want a failed open of %s", res, err, missing)
	}
}
