package loader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DefaultTrialTimeout bounds a trial load when TrialRunner.Timeout is zero.
const DefaultTrialTimeout = 10 * time.Second

// TrialArgs are the arguments that put the gatehouse binary in trial-load mode; the
// hidden `gatehouse plugin __trial` command.
var TrialArgs = []string{"plugin", "__trial"}

// TrialRunner runs Trial in a child process: the gatehouse binary re-executed with
// TrialArgs. The child writes its TrialResult as JSON to file descriptor 3, so whatever
// the plugin prints cannot be mistaken for it; its stdout and stderr are kept as the
// output a failure is reported with.
type TrialRunner struct {
	// Executable is the gatehouse binary; empty means this process's executable, which
	// is right in the server and the CLI but not in a test binary.
	Executable string
	// Timeout bounds the whole child, including the plugin's init code; zero means
	// DefaultTrialTimeout. On timeout the child's process group is killed.
	Timeout time.Duration
	// Spare, if set, holds a child started ahead of time (TrialSpare): Run hands it the
	// file instead of starting one, and falls back to starting one when there is none.
	Spare *TrialSpare
}

// Run trial-loads path in a child and returns the findings: none when it loads. The
// messages name display instead of path (the serving process trial-loads a private
// copy of the user's file). withConfig also decodes config and calls GetAuthService.
func (r TrialRunner) Run(ctx context.Context, display, path, symbol string, config []byte, withConfig bool) ([]Finding, *TrialResult) {
	exe := r.Executable
	if exe == "" {
		var err error
		if exe, err = selfExecutable(); err != nil {
			return []Finding{trialFailure(fmt.Sprintf("cannot find the gatehouse executable to re-run: %v", err), "")}, nil
		}
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTrialTimeout
	}
	if r.Spare != nil {
		if fs, res, ok := r.Spare.run(ctx, exe, timeout, display, TrialRequest{Path: path, Symbol: symbol, Config: config, WithConfig: withConfig}); ok {
			return fs, res
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	resultR, resultW, err := os.Pipe()
	if err != nil {
		return []Finding{trialFailure(fmt.Sprintf("cannot create a pipe: %v", err), "")}, nil
	}
	defer resultR.Close()
	args := append(append([]string{}, TrialArgs...), "--symbol", symbol, "--result-fd", "3")
	if withConfig {
		args = append(args, "--config-stdin")
	}
	cmd := exec.CommandContext(ctx, exe, append(args, path)...)
	cmd.Stdin = bytes.NewReader(config)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.ExtraFiles = []*os.File{resultW}
	// Its own process group, so a plugin's children are killed with it; and killed if
	// the server dies first, so no trial outlives the server that started it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		resultW.Close()
		return []Finding{trialFailure(fmt.Sprintf("cannot run %s: %v", exe, err), "")}, nil
	}
	resultW.Close()
	t := readTrial(resultR)
	t.waitErr = cmd.Wait()
	// Nothing the plugin started outlives its trial.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return t.report(ctx, exe, timeout, display, path, out.String())
}

// trialOutcome is what the parent saw of a trial child.
type trialOutcome struct {
	res       TrialResult
	decodeErr error // nil when the final result was read
	opening   bool  // the child said it was about to open the plugin
	waitErr   error
}

// readTrial reads the opening marker and the result from a child's result stream.
func readTrial(r io.Reader) trialOutcome {
	var t trialOutcome
	dec := json.NewDecoder(r)
	t.decodeErr = dec.Decode(&t.res)
	t.opening = t.decodeErr == nil && t.res.Opening
	if t.opening {
		t.res = TrialResult{}
		t.decodeErr = dec.Decode(&t.res)
	}
	return t
}

// report turns what was seen of a finished child into findings; the messages name
// display instead of path.
func (t trialOutcome) report(ctx context.Context, exe string, timeout time.Duration, display, path, output string) ([]Finding, *TrialResult) {
	replacer := strings.NewReplacer(path, display, strings.TrimSuffix(path, ".so"), strings.TrimSuffix(display, ".so"))
	printed := trimOutput(output, replacer)
	if t.decodeErr == nil {
		if t.res.OK {
			return nil, &t.res
		}
		return []Finding{resultFinding(t.res, replacer)}, &t.res
	}
	f := childFailure(ctx, exe, t.waitErr, timeout, printed, t.opening)
	stage := StageCrash
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		stage = StageTimeout
	}
	return []Finding{f}, &TrialResult{Stage: stage, Error: f.Detail, Fix: f.Fix}
}

func resultFinding(res TrialResult, rep *strings.Replacer) Finding {
	detail := rep.Replace(res.Error)
	detail = strings.TrimPrefix(detail, "loader: ")
	return Finding{Severity: SeverityError, Check: "trial load (" + res.Stage + ")", Detail: detail, Fix: res.Fix}
}

// childFailure describes a child that ended without a result: it crashed, was killed,
// hung until the timeout, was ended by the plugin's init code (opening: it had said
// it was about to open the plugin), or is not a gatehouse binary.
func childFailure(ctx context.Context, exe string, waitErr error, timeout time.Duration, printed string, opening bool) Finding {
	var detail, fix string
	var ee *exec.ExitError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		detail = fmt.Sprintf("the plugin did not finish loading within %s and was killed", timeout)
		fix = "find what blocks in the plugin's init code (package-level variables, init functions) or NewConfigInstance; they must not wait on the network or a lock"
	case errors.As(waitErr, &ee) && ee.ExitCode() == 2 && strings.Contains(printed, "panic:"):
		detail = "the plugin panicked while loading (init code runs when the plugin is opened)"
		fix = "fix the panic shown in the output; package-level variables and init functions run when the plugin is opened"
	case strings.Contains(printed, "fatal error:"):
		detail = "the Go runtime aborted while opening the plugin"
		fix = "see the output; the pre-flight findings usually name the cause (another Go release crashes like this)"
	case errors.As(waitErr, &ee) && !ee.Exited():
		detail = fmt.Sprintf("the plugin crashed the process that loaded it (%s)", ee.ProcessState)
		fix = "see the output; a crash while opening usually means a toolchain mismatch the pre-flight could not see, or a fault in the plugin's init code"
	case opening && errors.As(waitErr, &ee):
		detail = fmt.Sprintf("the plugin exited the process while it was being opened (exit code %d): its init code (package-level variables, init functions) calls os.Exit or log.Fatal", ee.ExitCode())
		fix = "remove the os.Exit or log.Fatal from the plugin's init code; report a problem from NewConfigInstance, GetAuthService or Start instead"
	case opening:
		detail = "the plugin ended the process while it was being opened, with exit code 0: its init code calls os.Exit"
		fix = "remove the os.Exit from the plugin's init code; report a problem from NewConfigInstance, GetAuthService or Start instead"
	case waitErr != nil:
		detail = fmt.Sprintf("the process that loaded the plugin exited with %v before reporting", waitErr)
		fix = fmt.Sprintf("see the output; if %s is not the gatehouse binary, set the trial executable to one", exe)
	default:
		detail = "the process that loaded the plugin reported no result"
		fix = fmt.Sprintf("check that %s is the gatehouse binary", exe)
	}
	if printed != "" {
		detail += "; it printed:\n" + printed
	}
	return Finding{Severity: SeverityError, Check: "trial load", Detail: detail, Fix: fix}
}

func trialFailure(detail, fix string) Finding {
	return Finding{Severity: SeverityError, Check: "trial load", Detail: detail, Fix: fix}
}
