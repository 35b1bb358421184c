package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"plugin"
	"reflect"
	"strings"

	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
)

// Trial stages, in the order they run.
const (
	StageOpen           = "open"
	StageLookup         = "lookup"
	StageConfigInstance = "config instance"
	StageDecode         = "config decode"
	StageService        = "auth service"
	// StageCrash and StageTimeout are set by the parent for a child that died or hung.
	StageCrash   = "crash"
	StageTimeout = "timeout"
)

// TrialResult is what the trial-load child reports on its result stream.
type TrialResult struct {
	// Opening marks the first of the child's two results, written just before
	// plugin.Open: a child that exits after it and before the second was ended by
	// the plugin's init code.
	Opening bool `json:"opening,omitempty"`
	OK      bool `json:"ok"`
	// Stage is where the trial stopped when it failed.
	Stage string `json:"stage,omitempty"`
	Error string `json:"error,omitempty"`
	Fix   string `json:"fix,omitempty"`
	// SymbolType and ConfigType are the dynamic types found, for messages.
	SymbolType string `json:"symbolType,omitempty"`
	ConfigType string `json:"configType,omitempty"`
}

// Trial is the trial load itself, run in a child process because plugin.Open runs the
// plugin's init code, which can panic, crash or hang, and because a failed Open leaves
// the process unable to open a good plugin with the same plugin path. It opens path,
// looks up symbol, checks its type and calls NewConfigInstance; when withConfig is set
// it also decodes config strictly and calls GetAuthService.
func Trial(ctx context.Context, path, symbol string, config []byte, withConfig bool) TrialResult {
	fail := func(stage string, err error, fix string) TrialResult {
		return TrialResult{Stage: stage, Error: err.Error(), Fix: fix}
	}
	p, err := plugin.Open(path)
	if err != nil {
		return fail(StageOpen, err, "see the pre-flight findings; `gatehouse plugin build` builds a plugin that matches this host")
	}
	ep, problem, fix := lookup(p, symbol)
	if problem != "" {
		r := TrialResult{Stage: StageLookup, Error: problem, Fix: fix}
		if sym, serr := p.Lookup(symbol); serr == nil {
			r.SymbolType = reflect.TypeOf(sym).String()
		}
		return r
	}
	res := TrialResult{OK: true, SymbolType: reflect.TypeOf(ep).String()}
	inst, err := configInstance(ctx, ep)
	if err != nil {
		return fail(StageConfigInstance, err, "fix NewConfigInstance; it must return a pointer to a new config value")
	}
	res.ConfigType = fmt.Sprintf("%T", inst)
	if !withConfig {
		config = nil
	}
	if err := pluginhost.DecodeConfig(inst, config); err != nil {
		r := fail(StageDecode, err, "change the step's config to match the plugin's config type, or the config type to accept it")
		if v := reflect.ValueOf(inst); v.Kind() != reflect.Pointer || v.IsNil() {
			r = TrialResult{Stage: StageConfigInstance,
				Error: fmt.Sprintf("NewConfigInstance returned %T, not a pointer, so no config can be decoded into it", inst),
				Fix:   "return a pointer to a new config value from NewConfigInstance, for example `return &Config{}, nil`"}
		}
		r.SymbolType, r.ConfigType = res.SymbolType, res.ConfigType
		return r
	}
	if withConfig {
		if _, err := pluginhost.NewService(ctx, ep, config); err != nil {
			r := fail(StageService, err, "the plugin rejected this config; correct the config or the plugin's GetAuthService")
			r.SymbolType, r.ConfigType = res.SymbolType, res.ConfigType
			return r
		}
	}
	return res
}

// WriteTrial is the child side of a trial load: it writes the opening marker, runs
// Trial and writes its result, each as one JSON value on w.
func WriteTrial(ctx context.Context, w io.Writer, path, symbol string, config []byte, withConfig bool) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(TrialResult{Opening: true}); err != nil {
		return err
	}
	return enc.Encode(Trial(ctx, path, symbol, config, withConfig))
}

func configInstance(ctx context.Context, ep interface {
	NewConfigInstance(context.Context) (any, error)
}) (inst any, err error) {
	defer pluginhost.Recover(&err, "NewConfigInstance")
	inst, err = ep.NewConfigInstance(ctx)
	if err != nil {
		return nil, fmt.Errorf("NewConfigInstance: %w", err)
	}
	return inst, nil
}

// trimOutput keeps the start of what a child printed: a panic message and the plugin's
// frames, not the loader's frames below them or pages of goroutine dumps.
func trimOutput(out string, replacer *strings.Replacer) string {
	const maxLines, maxBytes = 12, 2000
	out = strings.TrimSpace(replacer.Replace(out))
	lines := strings.Split(out, "\n")
	more := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "plugin.open(") || strings.HasPrefix(l, "plugin.Open(") {
			more, lines = len(lines)-i, lines[:i]
			break
		}
	}
	if len(lines) > maxLines {
		more += len(lines) - maxLines
		lines = lines[:maxLines]
	}
	out = strings.Join(lines, "\n")
	if len(out) > maxBytes {
		out = out[:maxBytes]
	}
	if more > 0 {
		out += fmt.Sprintf("\n… (%d more lines)", more)
	}
	return out
}

// ServeSpareTrial is the child side of a TrialSpare: it waits for one TrialRequest on
// r, then runs WriteTrial for it. r closing first (the server stopped, or closed the
// spare) ends it with nothing written.
func ServeSpareTrial(ctx context.Context, r io.Reader, w io.Writer) error {
	var req TrialRequest
	if err := json.NewDecoder(r).Decode(&req); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("reading the trial request: %w", err)
	}
	return WriteTrial(ctx, w, req.Path, req.Symbol, req.Config, req.WithConfig)
}
