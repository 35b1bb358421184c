package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The dev-loop phase runs `gatehouse dev --plugin-module` on a copy of the sample
// plugin and times saves until a Check answers with what was saved.
const (
	devLoopSource   = "plugins/required_header/required_header.go"
	devLoopConfigID = "gatehouse-system.plugin-auth" // examples/default, which dev serves
	devLoopHeader   = "matched-allowed-headers"
	devLoopLine     = `WithRequestHeader("matched-allowed-headers", "true")`
	devLoopGoMod    = "module example.com/required_header\n\ngo 1.26.0\n\nrequire gatehouse.dev/gatehouse v0.0.0\n"
	// devLoopTarget is issue 14's: a save serves within a second, p99.
	devLoopTarget = time.Second
	// devLoopStart bounds dev's start, whose first build tidies and pins the module.
	devLoopStart   = 5 * time.Minute
	devLoopTimeout = time.Minute
)

// Dev's log messages on the way from a save to serving (cmd/gatehouse/dev_plugin.go).
const (
	msgBuilding = "building the plugin module"
	msgBuilt    = "plugin built and checked; extauth loads it now"
	msgOpened   = "plugin version opened"
)

// devRound is one save, as offsets from the write; zero when not seen.
type devRound struct {
	Round    int
	Building time.Duration // the debounce passed and the build started
	Built    time.Duration // compiled, pre-flight and trial load passed, renamed into the plugin folder
	Opened   time.Duration // extauth's watcher saw it, checked it again and opened it
	Serving  time.Duration // the first Check answered with this round's header
	// GoBuild and Check are how long dev's build (go build) and its check (pre-flight
	// and trial load) took, from its log.
	GoBuild, Check time.Duration
}

// runDevLoop starts `gatehouse dev --plugin-module` on a copy of the sample plugin and,
// rounds times, saves the source with a new value of the allowed answer's header and
// sends a Check every checkEvery until one answers with it.
func runDevLoop(ctx context.Context, root, dir string, bins binaries, procs *procSet, rounds int) ([]devRound, error) {
	src, err := os.ReadFile(filepath.Join(root, devLoopSource))
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(src, []byte(devLoopLine)) {
		return nil, fmt.Errorf("%s: no %s to edit", devLoopSource, devLoopLine)
	}
	mod, pluginDir := filepath.Join(dir, "devloop-module"), filepath.Join(dir, "devloop-plugins")
	file := filepath.Join(mod, "required_header.go")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(file, src, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(devLoopGoMod), 0o644); err != nil {
		return nil, err
	}
	addrs, err := freeAddrs(3)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "gatehouse-devloop.log")
	p, err := procs.start("gatehouse dev --plugin-module", logPath, serverEnv(), bins.gatehouse, "dev",
		"--plugin-module", mod, "--plugin-dir", pluginDir, "--gatehouse-src", root,
		"--listen", addrs[0], "--extauth-listen", addrs[1], "--echo-listen", addrs[2])
	if err != nil {
		return nil, err
	}
	defer procs.stop(p)
	conn, err := grpc.NewClient(addrs[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	client := authv3.NewAuthorizationClient(conn)
	if err := waitAnswer(ctx, client, p, "true", devLoopStart); err != nil {
		return nil, fmt.Errorf("dev loop: first build: %w", err)
	}
	var out []devRound
	for i := 1; i <= rounds; i++ {
		want := fmt.Sprintf("r%d", i)
		edited := bytes.Replace(src, []byte(devLoopLine), []byte(`WithRequestHeader("matched-allowed-headers", "`+want+`")`), 1)
		r, err := timeSave(ctx, client, p, logPath, file, edited, want)
		if err != nil {
			return nil, fmt.Errorf("dev loop, round %d: %w", i, err)
		}
		r.Round = i
		progress(fmt.Sprintf("dev loop round %2d: save → serving %s (build started %s, built and checked %s, opened %s)",
			i, msRound(r.Serving), msRound(r.Building), msRound(r.Built), msRound(r.Opened)))
		out = append(out, r)
	}
	return out, nil
}

// timeSave writes content to file as an editor saves (in place) and sends Checks until
// one answers want, following dev's log meanwhile.
func timeSave(ctx context.Context, client authv3.AuthorizationClient, p *proc, logPath, file string, content []byte, want string) (devRound, error) {
	tl, err := openTail(logPath)
	if err != nil {
		return devRound{}, err
	}
	defer tl.f.Close()
	ctx, cancel := context.WithTimeout(ctx, devLoopTimeout)
	defer cancel()
	var r devRound
	t0 := time.Now()
	if err := os.WriteFile(file, content, 0o644); err != nil {
		return devRound{}, err
	}
	tick := time.NewTicker(checkEvery)
	defer tick.Stop()
	for {
		got, err := devAnswer(ctx, client)
		at := time.Since(t0)
		for _, msg := range tl.messages() {
			switch {
			case strings.Contains(msg, `"message":"`+msgBuilding+`"`) && r.Building == 0:
				r.Building = at
			case strings.Contains(msg, `"message":"`+msgBuilt+`"`) && r.Built == 0:
				r.Built = at
				r.GoBuild, r.Check = logDuration(msg, "build"), logDuration(msg, "check")
			case strings.Contains(msg, `"message":"`+msgOpened+`"`) && r.Opened == 0:
				r.Opened = at
			case strings.Contains(msg, `"level":"error"`):
				return devRound{}, fmt.Errorf("dev logged an error: %s", msg)
			}
		}
		if err == nil && got == want {
			r.Serving = at
			return r, nil
		}
		select {
		case <-ctx.Done():
			return devRound{}, fmt.Errorf("not serving %q after %s (last answer %q, %v); %v", want, devLoopTimeout, got, err, p.exited())
		case <-tick.C:
		}
	}
}

// logDuration is the duration a JSON log line gives in field (as "480ms"), or 0.
func logDuration(line, field string) time.Duration {
	var fields map[string]any
	if json.Unmarshal([]byte(line), &fields) != nil {
		return 0
	}
	s, _ := fields[field].(string)
	d, _ := time.ParseDuration(s)
	return d
}

// waitAnswer waits until a Check answers want.
func waitAnswer(ctx context.Context, client authv3.AuthorizationClient, p *proc, want string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		got, err := devAnswer(ctx, client)
		if err == nil && got == want {
			return nil
		}
		if exited := p.exited(); exited != nil {
			return exited
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no answer %q within %s (last %q, %v)", want, limit, got, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// devAnswer is the value of devLoopHeader on an allowed Check, "" when denied.
func devAnswer(ctx context.Context, client authv3.AuthorizationClient) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, envoyTimeout)
	defer cancel()
	resp, err := client.Check(cctx, browserRequest(devLoopConfigID, "/", map[string]string{"x-required": "alpha"}))
	if err != nil {
		return "", err
	}
	if code.Code(resp.GetStatus().GetCode()) != code.Code_OK {
		return "", nil
	}
	for _, h := range resp.GetOkResponse().GetHeaders() {
		if h.GetHeader().GetKey() == devLoopHeader {
			return h.GetHeader().GetValue(), nil
		}
	}
	return "", fmt.Errorf("allowed without %s", devLoopHeader)
}

// logTail reads the lines appended to a log file since it was opened.
type logTail struct {
	f       *os.File
	partial []byte
}

func openTail(path string) (*logTail, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, err
	}
	return &logTail{f: f}, nil
}

// messages returns the complete lines appended since the last call.
func (t *logTail) messages() []string {
	b, _ := io.ReadAll(t.f)
	t.partial = append(t.partial, b...)
	i := bytes.LastIndexByte(t.partial, '\n')
	if i < 0 {
		return nil
	}
	lines := strings.Split(string(t.partial[:i]), "\n")
	t.partial = append([]byte(nil), t.partial[i+1:]...)
	return lines
}
