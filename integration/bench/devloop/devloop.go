// Package devloop is the dev-loop section of `make bench`: what a plugin author waits
// for between a save and `gatehouse dev --plugin-module` serving it, for a module made
// by `gatehouse plugin new` in a folder of its own and for a copy of the repository's
// sample plugin.
package devloop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

const (
	// checkEvery is how often a Check asks what serves after a save.
	checkEvery = 5 * time.Millisecond
	// target is issues 14 and 30's: a save serves within a second, p99.
	target = time.Second
	// startLimit bounds dev's start, whose first build tidies and pins the module.
	startLimit = 5 * time.Minute
	saveLimit  = time.Minute
)

// Dev's log messages on the way from a save to serving.
const (
	msgBuilding = "building the plugin module"
	msgBuilt    = "plugin built and checked; extauth loads it now"
	msgOpened   = "plugin version opened"
)

// module is a plugin module the loop edits: the file saved, the line each save
// changes, and the Check whose answer tells which save serves.
type module struct {
	name     string // as the report names it
	dir      string
	file     string // saved each round, relative to dir
	line     string // in file; each save puts the round's value in place of first
	first    string // the value the unedited line answers with
	configID string
	request  map[string]string // headers that make the step allow
	header   string            // the allowed answer's header that carries the value
}

// scaffold makes a module with `gatehouse plugin new` in a folder of its own, outside
// the repository, as a plugin author starts.
func scaffold(ctx context.Context, env *benchkit.Env) (module, error) {
	const name = "benchplugin"
	dir := filepath.Join(env.Tmp, "author", name)
	if _, err := benchkit.Output(ctx, env.Tmp, env.Bins.Gatehouse, "plugin", "new", name, "--dir", dir, "--gatehouse-src", env.Root); err != nil {
		return module{}, err
	}
	return module{name: "`gatehouse plugin new` module, own folder", dir: dir, file: "main.go",
		line: `WithRequestHeader("x-checked-by", "` + name + `")`, first: name, configID: "gatehouse-system." + name,
		request: map[string]string{"x-api-key": "alpha"}, header: "x-checked-by"}, nil
}

// sample copies plugins/required_header into a module of its own, which dev serves
// with the embedded examples (they use it as required_header.so).
func sample(env *benchkit.Env) (module, error) {
	const source = "plugins/required_header/required_header.go"
	m := module{name: "copy of " + source, dir: filepath.Join(env.Tmp, "devloop-module"), file: "required_header.go",
		line: `WithRequestHeader("matched-allowed-headers", "true")`, first: "true", configID: checkload.ConfigID,
		request: map[string]string{"x-required": "alpha"}, header: "matched-allowed-headers"}
	src, err := os.ReadFile(filepath.Join(env.Root, source))
	if err != nil {
		return m, err
	}
	gomod := "module example.com/required_header\n\ngo 1.26.0\n\nrequire gatehouse.dev/gatehouse v0.0.0\n"
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return m, err
	}
	if err := os.WriteFile(filepath.Join(m.dir, m.file), src, 0o644); err != nil {
		return m, err
	}
	return m, os.WriteFile(filepath.Join(m.dir, "go.mod"), []byte(gomod), 0o644)
}

// save is one save, as offsets from the write; zero when not seen.
type save struct {
	Building time.Duration // the debounce passed and the build started
	Built    time.Duration // compiled, pre-flight and trial load passed, renamed into the plugin folder
	Opened   time.Duration // extauth's watcher saw it, checked it and opened it
	Serving  time.Duration // the first Check answered with this save's value
	// GoBuild and Check are how long dev's build (a go build, or the last one's
	// compile and link replayed) and its check (pre-flight and trial load) took, from
	// its log; Replayed says the build was a replay.
	GoBuild, Check time.Duration
	Replayed       bool
}

// loop starts `gatehouse dev --plugin-module` on m and times rounds saves.
func loop(ctx context.Context, env *benchkit.Env, m module, rounds int) ([]save, error) {
	path := filepath.Join(m.dir, m.file)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(src, []byte(m.line)) {
		return nil, fmt.Errorf("%s: no %s to edit", path, m.line)
	}
	addrs, err := benchkit.FreeAddrs(3)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(env.Tmp, "dev-"+filepath.Base(m.dir)+".log")
	p, err := env.Procs.Start("gatehouse dev --plugin-module", logPath, benchkit.ServerEnv(), env.Bins.Gatehouse, "dev",
		"--plugin-module", m.dir, "--plugin-dir", m.dir+"-plugins", "--gatehouse-src", env.Root,
		"--listen", addrs[0], "--extauth-listen", addrs[1], "--echo-listen", addrs[2])
	if err != nil {
		return nil, err
	}
	defer env.Procs.Stop(p)
	conn, err := grpc.NewClient(addrs[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	client := authv3.NewAuthorizationClient(conn)
	answer := func(ctx context.Context) (string, error) {
		return checkload.Answer(ctx, client, checkload.BrowserRequest(m.configID, "/", m.request), m.header)
	}
	if err := benchkit.Poll(ctx, p, startLimit, 100*time.Millisecond, func(ctx context.Context) error {
		if got, err := answer(ctx); err != nil || got != m.first {
			return fmt.Errorf("first build: answer %q, %v", got, err)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var out []save
	for i := 1; i <= rounds; i++ {
		want := fmt.Sprintf("r%d", i)
		edited := bytes.Replace(src, []byte(m.line), []byte(strings.Replace(m.line, `"`+m.first+`"`, `"`+want+`"`, 1)), 1)
		s, err := timeSave(ctx, p, logPath, path, edited, want, answer)
		if err != nil {
			return nil, fmt.Errorf("dev loop, round %d: %w", i, err)
		}
		benchkit.Progress("dev loop round %2d: save → serving %s (build started %s, built and checked %s, opened %s)", i,
			s.Serving.Round(time.Millisecond), s.Building.Round(time.Millisecond), s.Built.Round(time.Millisecond), s.Opened.Round(time.Millisecond))
		out = append(out, s)
	}
	return out, nil
}

// timeSave writes content to file as an editor saves (in place) and sends Checks until
// one answers want, following dev's log meanwhile.
func timeSave(ctx context.Context, p *benchkit.Proc, logPath, file string, content []byte, want string, answer func(context.Context) (string, error)) (save, error) {
	tl, err := benchkit.OpenTail(logPath)
	if err != nil {
		return save{}, err
	}
	defer tl.Close()
	ctx, cancel := context.WithTimeout(ctx, saveLimit)
	defer cancel()
	var s save
	t0 := time.Now()
	if err := os.WriteFile(file, content, 0o644); err != nil {
		return save{}, err
	}
	tick := time.NewTicker(checkEvery)
	defer tick.Stop()
	for {
		got, err := answer(ctx)
		at := time.Since(t0)
		for _, msg := range tl.Lines() {
			switch {
			case strings.Contains(msg, `"message":"`+msgBuilding+`"`) && s.Building == 0:
				s.Building = at
			case strings.Contains(msg, `"message":"`+msgBuilt+`"`) && s.Built == 0:
				s.Built = at
				s.GoBuild, s.Check = logDuration(msg, "build"), logDuration(msg, "check")
				s.Replayed = strings.Contains(msg, `"compiled":"replayed`)
			case strings.Contains(msg, `"message":"`+msgOpened+`"`) && s.Opened == 0:
				s.Opened = at
			case strings.Contains(msg, `"level":"error"`):
				return save{}, fmt.Errorf("dev logged an error: %s", msg)
			}
		}
		if err == nil && got == want {
			s.Serving = at
			return s, nil
		}
		select {
		case <-ctx.Done():
			return save{}, fmt.Errorf("not serving %q after %s (last answer %q, %v); %v", want, saveLimit, got, err, p.Exited())
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
