package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// TestABIServer runs the real `gatehouse extauth` with bad plugins and plugins that fail
// at run time, each in an AuthConfig of its own beside a good one: the process stays up,
// the good AuthConfig serves, and every bad one denies and is reported as Rejected, with
// the reason `gatehouse plugin verify` gives, in the status endpoint, the status command,
// the ERROR log and the status metric.
func TestABIServer(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	b := newABIBuilds(t)
	host := abiContract(t, gatehouse)
	t.Run("a bad plugin in one AuthConfig leaves the others serving", func(t *testing.T) {
		t.Parallel()
		testServerBadPlugins(t, gatehouse, b, host)
	})
	t.Run("panics and hangs in plugin code", func(t *testing.T) {
		t.Parallel()
		testServerPluginFaults(t, gatehouse, b)
	})
}

const (
	srvGoodStep = `{RequiredHeader: x-required, AllowedValues: [alpha]}`
	srvTypoStep = `{RequiredHeader: x-required, AllowedValue: [alpha]}`
	// srvRHLoaded starts the finding for a build of plugins/required_header with other
	// flags: every build has the same plugin path, and the good one is loaded.
	srvRHLoaded = `plugin path: another build with plugin path "gatehouse.dev/gatehouse/plugins/required_header" is already loaded (from `
)

// srvBadCase is an AuthConfig whose only step uses a plugin file that does not load,
// or a good plugin with a config it refuses.
type srvBadCase struct {
	name   string                      // AuthConfig name and plugin file name without .so
	plugin func(t *testing.T) string   // builds the plugin file
	step   string                      // the step's config
	want   func(so, dir string) string // the key part of the reason (so is the built file)
	// alsoLoaded is set for builds of required_header with other flags: the good
	// AuthConfig comes first, so its build is loaded when they are refused, and the
	// loader names that too.
	alsoLoaded bool
}

func testServerBadPlugins(t *testing.T, gatehouse string, b *abiBuilds, host *loader.Contract) {
	hostSys, ok := host.Module("golang.org/x/sys")
	if !ok {
		t.Fatal("the host links no golang.org/x/sys")
	}
	build := func(p abiPlugin) func(*testing.T) string {
		return func(t *testing.T) string { return b.build(t, p) }
	}
	fixed := func(s string) func(string, string) string { return func(string, string) string { return s } }
	cases := []srvBadCase{
		{name: "depversion", plugin: build(abiPlugin{name: "depversion", pkg: ".", dir: filepath.Join(b.root, "integration/testdata/plugins/depversion"), env: []string{"GOFLAGS=-mod=mod"}}),
			want: fixed("module golang.org/x/sys: host " + hostSys.Version + ", plugin v0.50.0; shared package golang.org/x/sys/unix differs; fix: go mod edit -require=golang.org/x/sys@" + hostSys.Version)},
		{name: "trimpath", plugin: build(abiPlugin{name: "trimpath", pkg: requiredHeader.pkg, args: []string{"-trimpath"}}),
			want: fixed("-trimpath: host false, plugin true; fix: rebuild without -trimpath"), alsoLoaded: true},
		{name: "race", plugin: build(abiPlugin{name: "race", pkg: requiredHeader.pkg, args: []string{"-race"}}),
			want: fixed("-race: host false, plugin true; fix: rebuild without -race"), alsoLoaded: true},
		{name: "gcflags", plugin: build(abiPlugin{name: "gcflags", pkg: requiredHeader.pkg, args: []string{"-gcflags=all=-N -l"}}),
			want: fixed("-gcflags: host (none), plugin all=-N -l; fix: rebuild without -gcflags"), alsoLoaded: true},
		{name: "go125", plugin: func(t *testing.T) string { return go125(t, b) },
			want: fixed("go version: host " + host.GoVersion + ", plugin go1.25.0; opening a plugin of another Go release can crash the whole process, so it is never opened")},
		{name: "nosymbol", plugin: build(testdataPlugin("nosymbol")),
			want: fixed(`trial load (lookup): no exported symbol "Plugin" (it exports Other)`)},
		{name: "wrongtype", plugin: build(testdataPlugin("wrongtype")),
			want: fixed(`trial load (lookup): symbol "Plugin" has type *main.halfPlugin, which does not implement pluginapi.ExtAuthPlugin`)},
		{name: "nonpointer", plugin: build(testdataPlugin("nonpointer")),
			want: fixed("trial load (config instance): NewConfigInstance returned main.Config, not a pointer, so no config can be decoded into it")},
		{name: "typo", plugin: build(requiredHeader), step: srvTypoStep,
			want: fixed(`config: unknown field "AllowedValue" (config type main.Config)`)},
		{name: "initpanic", plugin: build(testdataPlugin("initpanic")),
			want: fixed("trial load: the plugin panicked while loading (init code runs when the plugin is opened); it printed:\npanic: initpanic: cannot reach the license server\n")},
		{name: "inithang", plugin: build(testdataPlugin("inithang")),
			want: fixed(fmt.Sprintf("trial load: the plugin did not finish loading within %s and was killed", loader.DefaultTrialTimeout))},
		{name: "truncated", plugin: func(t *testing.T) string { return truncated(t, b.build(t, requiredHeader)) },
			want: func(so, _ string) string {
				full, err := os.Stat(strings.TrimSuffix(so, ".truncated"))
				if err != nil {
					return err.Error()
				}
				return fmt.Sprintf("file: truncated: the file is %d bytes but its ELF headers describe at least %d", full.Size()/2, full.Size())
			}},
		{name: "notelf", plugin: func(t *testing.T) string {
			so := filepath.Join(t.TempDir(), "notes.so")
			abiWrite(t, so, "TODO: build the plugin\n")
			return so
		}, want: fixed(`file: not an ELF file (it starts with "TODO")`)},
	}

	// Build every plugin (two at a time) and put it into the plugin directory under
	// the name of its AuthConfig.
	dir := t.TempDir()
	sources := make([]string, len(cases))
	var good string
	t.Run("build", func(t *testing.T) {
		t.Run("required_header", func(t *testing.T) { t.Parallel(); good = b.build(t, requiredHeader) })
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				sources[i] = tc.plugin(t)
				srvInstall(t, sources[i], dir, tc.name+".so")
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	srvInstall(t, good, dir, "required_header.so")
	config := srvAuthConfig("good", "required_header", "required_header.so", "Plugin", srvGoodStep)
	for _, tc := range cases {
		step := tc.step
		if step == "" {
			step = srvGoodStep
		}
		config += srvAuthConfig(tc.name, tc.name, tc.name+".so", "Plugin", step)
	}

	// The good AuthConfig is served first, then the others are added: their builds run
	// side by side, and a plugin-path clash is reported only against a plugin already
	// open.
	s := startSrv(t, gatehouse, dir, srvAuthConfig("good", "required_header", "required_header.so", "Plugin", srvGoodStep))
	abiWrite(t, s.config, config)
	var statuses map[string]server.Status
	testbin.Eventually(t, 2*time.Minute, func() error {
		if statuses = s.statuses(t); len(statuses) < len(cases)+1 {
			return fmt.Errorf("%d of %d AuthConfigs have a status", len(statuses), len(cases)+1)
		}
		return nil
	})
	rejections := s.logsOnce(t, "error", "auth config rejected", len(cases))

	t.Run("the good AuthConfig serves", func(t *testing.T) {
		for _, c := range []struct {
			headers map[string]string
			want    srvVerdict
		}{
			{map[string]string{"x-required": "alpha"}, srvMatched},
			{map[string]string{"x-required": "beta"}, srvForbidden},
			{nil, srvForbidden},
		} {
			if got := s.verdict(t, "default.good", c.headers); !cmp.Equal(got, c.want) {
				t.Errorf("default.good with %v: %v, want %v", c.headers, got, c.want)
			}
		}
		if st := statuses["default.good"]; st.State != server.StateAccepted {
			t.Errorf("default.good status %+v, want Accepted", st)
		}
		if v := s.metric(t, "gatehouse_extauth_auth_config_status", map[string]string{"config_id": "default.good", "state": "Accepted"}); v != 1 {
			t.Errorf("status metric of default.good Accepted = %v, want 1", v)
		}
	})

	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := "default." + tc.name
			file := filepath.Join(dir, tc.name+".so")
			want := []string{tc.want(sources[i], dir)}
			if tc.alsoLoaded {
				want = append(want, srvRHLoaded+filepath.Join(dir, "required_header.so")+", sha256 "+sha(t, good)[:12]+"); a process cannot load two plugins with the same plugin path")
			}
			if tc.step == "" {
				want = append(want, "loader: "+file+": ")
			}
			if got := s.verdict(t, id, map[string]string{"x-required": "alpha"}); !cmp.Equal(got, srvForbidden) {
				t.Errorf("Check: %v, want 403", got)
			}
			st := statuses[id]
			if st.State != server.StateRejected || st.ServingPrevious || missing(st.Reason, want) != "" {
				t.Errorf("/auth-configs: %+v\nwant Rejected, not serving, with a reason holding %q", st, missing(st.Reason, want))
			}
			t.Logf("%s: %s", id, st.Reason)
			logged := false
			for _, l := range rejections {
				logged = logged || l.str("config_id") == id && l.str("error") == st.Reason
			}
			if !logged {
				t.Errorf("no ERROR log line \"auth config rejected\" with config_id %s and error %q", id, st.Reason)
			}
			if v := s.metric(t, "gatehouse_extauth_auth_config_status", map[string]string{"config_id": id, "state": "Rejected", "serving_previous": "false"}); v != 1 {
				t.Errorf("gatehouse_extauth_auth_config_status{config_id=%q,state=\"Rejected\"} = %v, want 1", id, v)
			}
		})
	}

	t.Run("gatehouse extauth status lists every rejected AuthConfig and exits 1", func(t *testing.T) {
		r := s.status(t)
		if r.code != 1 || !regexp.MustCompile(`(?m)^default\.good +Accepted +yes`).MatchString(r.stdout) {
			t.Errorf("exit %d, printed\n%s%s\nwant exit 1 and default.good Accepted", r.code, r.stdout, r.stderr)
		}
		for _, tc := range cases {
			if !regexp.MustCompile(`(?m)^default\.` + tc.name + ` +Rejected +no +spec\.configs\[0\]\.pluginAuth \(` + tc.name + `\): `).MatchString(r.stdout) {
				t.Errorf("status does not list default.%s as Rejected with its reason:\n%s", tc.name, r.stdout)
			}
		}
		if want := fmt.Sprintf("%d of %d auth configs rejected", len(cases), len(cases)+1); !strings.Contains(r.stderr, want) {
			t.Errorf("status stderr %q lacks %q", r.stderr, want)
		}
	})

	// A changed inithang.so rebuilds default.inithang, and its trial load holds that
	// rebuild for the trial timeout. The status stays readable meanwhile (it once
	// waited for the rebuild, past the status command's 5s timeout), and the good
	// AuthConfig keeps serving.
	t.Run("status and Checks answer while a rebuild waits on a hanging trial load", func(t *testing.T) {
		hangs := func() int {
			n := 0
			for _, l := range s.logs("error", "auth config rejected") {
				if l.str("config_id") == "default.inithang" {
					n++
				}
			}
			return n
		}
		before := hangs()
		// The same plugin with a byte appended: new content, so it is checked again.
		changed := filepath.Join(t.TempDir(), "inithang.so")
		data, err := os.ReadFile(filepath.Join(dir, "inithang.so"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(changed, append(data, 0), 0o755); err != nil {
			t.Fatal(err)
		}
		srvInstall(t, changed, dir, "inithang.so")
		testbin.Eventually(t, 10*time.Second, func() error {
			if len(s.logs("info", "plugin files appeared or changed")) == 0 {
				return fmt.Errorf("the changed inithang.so was not noticed")
			}
			return nil
		})
		if r := s.status(t); r.code != 1 || !strings.Contains(r.stdout, "default.inithang") {
			t.Errorf("gatehouse extauth status during the rebuild: exit %d\n%s%s\nwant exit 1 and every AuthConfig listed", r.code, r.stdout, r.stderr)
		}
		if got := s.verdict(t, "default.good", map[string]string{"x-required": "alpha"}); !cmp.Equal(got, srvMatched) {
			t.Errorf("default.good during the rebuild: %v, want allowed", got)
		}
		// Let the rebuild finish, so no trial load outlives the test.
		testbin.Eventually(t, 3*loader.DefaultTrialTimeout, func() error {
			if hangs() == before {
				return fmt.Errorf("the rebuild has not rejected default.inithang again")
			}
			return nil
		})
	})

	if s.proc.Exited() {
		t.Fatalf("gatehouse extauth exited:\n%s", s.proc.Output())
	}
	if got := s.verdict(t, "default.good", map[string]string{"x-required": "alpha"}); !cmp.Equal(got, srvMatched) {
		t.Errorf("default.good at the end: %v, want allowed", got)
	}
}

// missing is the first of want that s lacks, or "".
func missing(s string, want []string) string {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return w
		}
	}
	return ""
}

// testServerPluginFaults runs plugins that fail in Authorize (a panic; a call that
// ignores its deadline) and in NewConfigInstance, GetAuthService and Start (panics).
func testServerPluginFaults(t *testing.T, gatehouse string, b *abiBuilds) {
	dir := t.TempDir()
	srvInstall(t, b.build(t, requiredHeader), dir, "required_header.so")
	testbin.Plugin(t, "./integration/foundation/testdata/plugins/faulty", dir, "faulty.so")
	testbin.Plugin(t, "./integration/testdata/plugins/stuck", dir, "stuck.so")
	testbin.Plugin(t, "./integration/testdata/plugins/lifecyclepanic", dir, "lifecyclepanic.so")
	release := filepath.Join(t.TempDir(), "release")
	s := startSrv(t, gatehouse, dir,
		// panic-new comes first, so it is the trial load that meets the panic.
		srvAuthConfig("panic-new", "lifecyclepanic", "lifecyclepanic.so", "PanicsInNew", "{}")+
			srvAuthConfig("panic-get", "lifecyclepanic", "lifecyclepanic.so", "Plugin", "{Where: get}")+
			srvAuthConfig("panic-start", "lifecyclepanic", "lifecyclepanic.so", "Plugin", "{Where: start}")+
			srvAuthConfig("lifecycle-ok", "lifecyclepanic", "lifecyclepanic.so", "Plugin", "{Where: nowhere}")+
			srvAuthConfig("good", "required_header", "required_header.so", "Plugin", srvGoodStep)+
			srvAuthConfig("panics", "faulty", "faulty.so", "Plugin", "{Mode: panic}")+
			srvAuthConfig("stuck", "stuck", "stuck.so", "Plugin", fmt.Sprintf("{Release: %q}", release)))
	alpha := map[string]string{"x-required": "alpha"}
	abandoned := func() float64 { return s.metric(t, "gatehouse_extauth_abandoned_step_calls", nil) }
	checks := func(id, outcome string) float64 {
		return s.metric(t, "gatehouse_extauth_checks_total", map[string]string{"config_id": id, "outcome": outcome})
	}

	t.Run("a panic in Authorize denies with 500 and is logged with its stack", func(t *testing.T) {
		if got := s.verdict(t, "default.panics", nil); !cmp.Equal(got, srvFailed) {
			t.Errorf("default.panics: %v, want 500", got)
		}
		if v := checks("default.panics", "panic"); v != 1 {
			t.Errorf("checks_total{outcome=panic} = %v, want 1", v)
		}
		logged := false
		for _, l := range s.logs("error", "step failed; denying") {
			logged = logged || l.str("config_id") == "default.panics" && l.str("error") == "step/faulty: panic: faulty plugin panics on purpose" && l.str("stack") != ""
		}
		if !logged {
			t.Errorf("no ERROR log line for the panic with its stack")
		}
		if got := s.verdict(t, "default.good", alpha); !cmp.Equal(got, srvMatched) {
			t.Errorf("default.good after the panic: %v, want allowed", got)
		}
	})

	t.Run("an Authorize that ignores its deadline is abandoned and counted until it returns", func(t *testing.T) {
		if v := abandoned(); v != 0 {
			t.Fatalf("gatehouse_extauth_abandoned_step_calls = %v before the call, want 0", v)
		}
		if got := s.verdict(t, "default.stuck", nil); !cmp.Equal(got, srvFailed) {
			t.Errorf("default.stuck: %v, want 500 at the deadline", got)
		}
		// The call stays blocked until the release file exists, so these hold however
		// long they take.
		if v := abandoned(); v != 1 {
			t.Errorf("gatehouse_extauth_abandoned_step_calls = %v while the call runs, want 1", v)
		}
		if v := checks("default.stuck", "deadline"); v != 1 {
			t.Errorf("checks_total{outcome=deadline} = %v, want 1", v)
		}
		// Which plugin is stuck is in the metric, the status and the log.
		stuck := map[string]string{"config_id": "default.stuck", "step": "step/stuck", "plugin": "stuck.so"}
		if v := s.metric(t, "gatehouse_extauth_stuck_step_calls", stuck); v != 1 {
			t.Errorf("gatehouse_extauth_stuck_step_calls%v = %v while the call runs, want 1", stuck, v)
		}
		wantStuck := []chain.StuckStep{{Step: "step/stuck", Plugin: "stuck.so", Calls: 1}}
		if diff := cmp.Diff(wantStuck, s.statuses(t)["default.stuck"].Stuck); diff != "" {
			t.Errorf("status of default.stuck while the call runs (-want +got):\n%s", diff)
		}
		logged := 0
		for _, l := range s.logs("warn", "step call passed its deadline and still runs; the plugin ignores its context") {
			if l.str("config_id") == "default.stuck" && l.str("step") == "step/stuck" && l.str("plugin") == "stuck.so" {
				logged++
			}
		}
		if logged != 1 {
			t.Errorf("%d WARN log lines name the stuck plugin, want 1", logged)
		}
		if got := s.verdict(t, "default.good", alpha); !cmp.Equal(got, srvMatched) {
			t.Errorf("default.good while the abandoned call runs: %v, want allowed", got)
		}
		abiWrite(t, release, "")
		testbin.Eventually(t, 10*time.Second, func() error {
			if v := abandoned(); v != 0 {
				return fmt.Errorf("gatehouse_extauth_abandoned_step_calls = %v after the call returned, want 0", v)
			}
			if v := s.metric(t, "gatehouse_extauth_stuck_step_calls", stuck); v != -1 {
				return fmt.Errorf("gatehouse_extauth_stuck_step_calls%v = %v after the call returned, want no series", stuck, v)
			}
			return nil
		})
	})

	t.Run("panics in NewConfigInstance, GetAuthService and Start reject the AuthConfig", func(t *testing.T) {
		statuses := s.statuses(t)
		rejections := s.logsOnce(t, "error", "auth config rejected", 3)
		for id, want := range map[string]string{
			"default.panic-new":   "trial load (config instance): NewConfigInstance panicked: lifecyclepanic: on purpose (new)",
			"default.panic-get":   "panicked: lifecyclepanic: on purpose (get)",
			"default.panic-start": "Start panicked: lifecyclepanic: on purpose (start)",
		} {
			st := statuses[id]
			if st.State != server.StateRejected || !strings.Contains(st.Reason, want) {
				t.Errorf("%s: %+v, want Rejected with %q", id, st, want)
			}
			t.Logf("%s: %s", id, st.Reason)
			logged := false
			for _, l := range rejections {
				logged = logged || l.str("config_id") == id && l.str("error") == st.Reason
			}
			if !logged {
				t.Errorf("%s: no ERROR log line with its reason", id)
			}
			if got := s.verdict(t, id, alpha); !cmp.Equal(got, srvForbidden) {
				t.Errorf("%s: %v, want 403", id, got)
			}
		}
		for _, id := range []string{"default.lifecycle-ok", "default.good"} {
			if st := statuses[id]; st.State != server.StateAccepted {
				t.Errorf("%s: %+v, want Accepted", id, st)
			}
			if got := s.verdict(t, id, alpha); got.RPC != 0 {
				t.Errorf("%s: %v, want allowed", id, got)
			}
		}
	})
	if s.proc.Exited() {
		t.Fatalf("gatehouse extauth exited:\n%s", s.proc.Output())
	}
}
