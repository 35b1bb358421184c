package integration_test

import (
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// Regression (issue 12, finding 11): a plugin whose init calls os.Exit was reported as
// "the process that loaded the plugin exited … before reporting; … set the trial
// executable", as if the gatehouse binary were wrong. It is said to be the plugin's
// init code, with its exit code and output.
func TestABIInitExit(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	so := newABIBuilds(t).build(t, testdataPlugin("initexit"))
	r := abiRun(t, "", nil, gatehouse, "plugin", "verify", so)
	want := so + ": refused, 1 error\n" +
		"  error   trial load: the plugin exited the process while it was being opened (exit code 3): its init code (package-level variables, init functions) calls os.Exit or log.Fatal; it printed:\n" +
		"          initexit: license check failed; fix: remove the os.Exit or log.Fatal from the plugin's init code; report a problem from NewConfigInstance, GetAuthService or Start instead\n"
	if r.code != 1 || !strings.HasPrefix(r.stdout, want) {
		t.Errorf("gatehouse plugin verify: exit %d, printed\n%s\nwant exit 1 and\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
}

// Regression (issue 12, finding 12): exportedSymbolName defaults to the step's name,
// often lower case, which Go never exports; the advice printed for it
// (`var lowersym pluginapi.ExtAuthPlugin = …`) could not work. The message says why and
// names the variable the plugin does export.
func TestABILowerCaseSymbol(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	so := newABIBuilds(t).build(t, testdataPlugin("nosymbol"))
	r := abiRun(t, "", nil, gatehouse, "plugin", "verify", so, "--symbol", "nosymbol")
	want := so + ": refused, 1 error\n" +
		"  error   trial load (lookup): no exported symbol \"nosymbol\": Go exports only names that start with an upper-case letter, so no plugin can export \"nosymbol\" (it exports Other); " +
		"fix: set exportedSymbolName: Other in the step (verify: --symbol Other); it defaults to the step's name, \"nosymbol\". The plugin must export that variable: `var Other pluginapi.ExtAuthPlugin = myPlugin{}`\n"
	if r.code != 1 || r.stdout != want {
		t.Errorf("gatehouse plugin verify --symbol nosymbol: exit %d, printed\n%s\nwant exit 1 and\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
}
