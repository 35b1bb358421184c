package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/durationpb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// fakeBuilds is a server.BuildFunc that counts builds per config_id, keeps each
// build's context, and fails for the ids in failing.
type fakeBuilds struct {
	mu      sync.Mutex
	count   map[string]int
	ctxs    map[*chain.Chain]context.Context
	failing map[string]error
}

func newFakeBuilds() *fakeBuilds {
	return &fakeBuilds{count: map[string]int{}, ctxs: map[*chain.Chain]context.Context{}, failing: map[string]error{}}
}

func (f *fakeBuilds) build(ctx context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count[cfg.GetConfigId()]++
	if err := f.failing[cfg.GetConfigId()]; err != nil {
		return nil, err
	}
	c := &chain.Chain{ID: cfg.GetConfigId(), Timeout: cfg.GetRequestTimeout().AsDuration()}
	f.ctxs[c] = ctx
	return c, nil
}

func (f *fakeBuilds) builds(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[id]
}

func (f *fakeBuilds) fail(id string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.failing, id)
	} else {
		f.failing[id] = err
	}
}

// cancelled reports whether the context c was built with is done.
func (f *fakeBuilds) cancelled(t *testing.T, c *chain.Chain) bool {
	t.Helper()
	f.mu.Lock()
	ctx, ok := f.ctxs[c]
	f.mu.Unlock()
	if !ok {
		t.Fatalf("chain %p was not built by this fake", c)
	}
	return ctx.Err() != nil
}

func cfg(id string, timeout time.Duration) *extauthv1.ExtAuthConfig {
	return &extauthv1.ExtAuthConfig{ConfigId: id, RequestTimeout: durationpb.New(timeout), Steps: []*extauthv1.Step{{
		Kind: &extauthv1.Step_PluginAuth{PluginAuth: &extauthv1.PluginAuth{Name: "p", PluginFileName: "p.so", ExportedSymbolName: "Plugin"}},
	}}}
}

func cfgs(cs ...*extauthv1.ExtAuthConfig) []*extauthv1.ExtAuthConfig { return cs }

func accepted(id string) server.Status { return server.Status{ID: id, State: server.StateAccepted} }

func lookup(t *testing.T, reg *server.Registry, id string) *chain.Chain {
	t.Helper()
	c, ok := reg.Lookup(id)
	if !ok {
		t.Fatalf("Lookup(%q): not serving", id)
	}
	return c
}

func TestRegistryApply(t *testing.T) {
	f := newFakeBuilds()
	reg := server.NewRegistry(f.build, zerolog.Nop())

	// First set: both accepted and served.
	st := reg.Apply(cfgs(cfg("ns.b", time.Second), cfg("ns.a", time.Second)), nil)
	if diff := cmp.Diff([]server.Status{accepted("ns.a"), accepted("ns.b")}, st); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}
	a1, b1 := lookup(t, reg, "ns.a"), lookup(t, reg, "ns.b")
	if a1.ID != "ns.a" || a1.Timeout != time.Second {
		t.Errorf("chain ns.a = %+v", a1)
	}

	// Same set again: nothing is rebuilt, the very same chains serve.
	reg.Apply(cfgs(cfg("ns.a", time.Second), cfg("ns.b", time.Second)), nil)
	if lookup(t, reg, "ns.a") != a1 || lookup(t, reg, "ns.b") != b1 {
		t.Errorf("unchanged configs got new chains")
	}
	if f.builds("ns.a") != 1 || f.builds("ns.b") != 1 {
		t.Errorf("builds after an unchanged Apply = a:%d b:%d, want 1 each", f.builds("ns.a"), f.builds("ns.b"))
	}
	if f.cancelled(t, a1) || f.cancelled(t, b1) {
		t.Errorf("an unchanged chain's context was cancelled")
	}

	// ns.a changes: rebuilt, swapped, the old one's context cancelled; ns.b untouched.
	st = reg.Apply(cfgs(cfg("ns.a", 2*time.Second), cfg("ns.b", time.Second)), nil)
	if diff := cmp.Diff([]server.Status{accepted("ns.a"), accepted("ns.b")}, st); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	a2 := lookup(t, reg, "ns.a")
	if a2 == a1 || a2.Timeout != 2*time.Second {
		t.Errorf("changed config still serves the old chain")
	}
	if !f.cancelled(t, a1) {
		t.Errorf("the replaced chain's context is not cancelled")
	}
	if f.cancelled(t, a2) || lookup(t, reg, "ns.b") != b1 || f.cancelled(t, b1) {
		t.Errorf("the new or the untouched chain was cancelled or replaced")
	}

	// ns.b is no longer listed: removed and cancelled.
	st = reg.Apply(cfgs(cfg("ns.a", 2*time.Second)), nil)
	if diff := cmp.Diff([]server.Status{accepted("ns.a")}, st); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if _, ok := reg.Lookup("ns.b"); ok {
		t.Errorf("removed config ns.b still serves")
	}
	if !f.cancelled(t, b1) {
		t.Errorf("removed chain's context is not cancelled")
	}
	if diff := cmp.Diff([]server.Status{accepted("ns.a")}, reg.Statuses()); diff != "" {
		t.Errorf("Statuses (-want +got):\n%s", diff)
	}
}

func TestRegistryKeepsLastGood(t *testing.T) {
	broken := errors.New("spec.configs[0].pluginAuth (p): loader: p.so: no such plugin file")
	tests := []struct {
		name string
		// next applies the bad version of ns.a, given its good version.
		next         func(f *fakeBuilds, reg *server.Registry) []server.Status
		wantReason   string
		wantBuildsOf int // builds of ns.a after next
	}{
		{
			name: "build fails",
			next: func(f *fakeBuilds, reg *server.Registry) []server.Status {
				f.fail("ns.a", broken)
				return reg.Apply(cfgs(cfg("ns.a", 2*time.Second)), nil)
			},
			wantReason:   broken.Error(),
			wantBuildsOf: 2,
		},
		{
			name: "translation rejected",
			next: func(_ *fakeBuilds, reg *server.Registry) []server.Status {
				return reg.Apply(nil, map[string]error{"ns.a": errors.New("authconfig ns.a: spec.configs: at least one step is required")})
			},
			wantReason:   "authconfig ns.a: spec.configs: at least one step is required",
			wantBuildsOf: 1,
		},
		{
			name: "translation rejected while also listed",
			next: func(_ *fakeBuilds, reg *server.Registry) []server.Status {
				return reg.Apply(cfgs(cfg("ns.a", 3*time.Second)), map[string]error{"ns.a": errors.New("bad timeout")})
			},
			wantReason:   "bad timeout",
			wantBuildsOf: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeBuilds()
			reg := server.NewRegistry(f.build, zerolog.Nop())
			reg.Apply(cfgs(cfg("ns.a", time.Second)), nil)
			good := lookup(t, reg, "ns.a")

			st := tt.next(f, reg)
			want := []server.Status{{ID: "ns.a", State: server.StateRejected, Reason: tt.wantReason, ServingPrevious: true}}
			if diff := cmp.Diff(want, st); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if lookup(t, reg, "ns.a") != good {
				t.Errorf("the last good chain no longer serves")
			}
			if f.cancelled(t, good) {
				t.Errorf("the last good chain's context was cancelled")
			}
			if got := f.builds("ns.a"); got != tt.wantBuildsOf {
				t.Errorf("builds = %d, want %d", got, tt.wantBuildsOf)
			}

			// The fixed version replaces it.
			f.fail("ns.a", nil)
			st = reg.Apply(cfgs(cfg("ns.a", 5*time.Second)), nil)
			if diff := cmp.Diff([]server.Status{accepted("ns.a")}, st); diff != "" {
				t.Errorf("statuses after the fix (-want +got):\n%s", diff)
			}
			if c := lookup(t, reg, "ns.a"); c == good || c.Timeout != 5*time.Second {
				t.Errorf("the fixed version does not serve")
			}
			if !f.cancelled(t, good) {
				t.Errorf("the replaced last good chain's context is not cancelled")
			}
		})
	}
}

func TestRegistryRejectsNewConfigs(t *testing.T) {
	f := newFakeBuilds()
	f.fail("ns.broken", errors.New("no plugin"))
	reg := server.NewRegistry(f.build, zerolog.Nop())
	st := reg.Apply(cfgs(cfg("ns.ok", time.Second), cfg("ns.broken", time.Second)), map[string]error{"ns.untranslatable": errors.New("bad yaml")})
	want := []server.Status{
		{ID: "ns.broken", State: server.StateRejected, Reason: "no plugin"},
		accepted("ns.ok"),
		{ID: "ns.untranslatable", State: server.StateRejected, Reason: "bad yaml"},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	for _, id := range []string{"ns.broken", "ns.untranslatable"} {
		if _, ok := reg.Lookup(id); ok {
			t.Errorf("Lookup(%q) serves a config that never built", id)
		}
	}
	lookup(t, reg, "ns.ok")
}

// Regression: of two configs with one config_id, the first was built and replaced the
// serving version while the status said the previous version kept serving.
func TestRegistryDuplicateConfigID(t *testing.T) {
	f := newFakeBuilds()
	reg := server.NewRegistry(f.build, zerolog.Nop())
	reg.Apply(cfgs(cfg("ns.a", time.Second)), nil)
	serving := lookup(t, reg, "ns.a")

	st := reg.Apply(cfgs(cfg("ns.a", 2*time.Second), cfg("ns.b", time.Second), cfg("ns.a", 3*time.Second)), nil)
	want := []server.Status{
		{ID: "ns.a", State: server.StateRejected, Reason: "config_id appears 2 times; none of them is applied", ServingPrevious: true},
		accepted("ns.b"),
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if c := lookup(t, reg, "ns.a"); c != serving || f.cancelled(t, serving) {
		t.Errorf("serving the chain with timeout %v, want the previous version (1s), not cancelled", c.Timeout)
	}
	if got := f.builds("ns.a"); got != 1 {
		t.Errorf("builds = %d, want 1 (neither duplicate is built)", got)
	}

	// New and defined twice: nothing serves.
	st = reg.Apply(cfgs(cfg("ns.new", time.Second), cfg("ns.new", 2*time.Second)), nil)
	want = []server.Status{{ID: "ns.new", State: server.StateRejected, Reason: "config_id appears 2 times; none of them is applied"}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("statuses of a new duplicate (-want +got):\n%s", diff)
	}
	if _, ok := reg.Lookup("ns.new"); ok {
		t.Errorf("a new config defined twice serves")
	}
}

func TestRegistryRebuild(t *testing.T) {
	f := newFakeBuilds()
	reg := server.NewRegistry(f.build, zerolog.Nop())
	f.fail("ns.c", errors.New("plugin file missing"))
	reg.Apply(cfgs(cfg("ns.a", time.Second), cfg("ns.b", time.Second), cfg("ns.c", time.Second)),
		map[string]error{"ns.d": errors.New("untranslatable")})
	a1, b1 := lookup(t, reg, "ns.a"), lookup(t, reg, "ns.b")

	// The plugin file of ns.c appears: a Rebuild that selects only ns.a rebuilds ns.a
	// and leaves everything else as it was, ns.c still rejected and not built again
	// (a slow or failing build elsewhere must not hold up the one that changed).
	f.fail("ns.c", nil)
	st := reg.Rebuild(func(c *extauthv1.ExtAuthConfig) bool { return c.GetConfigId() == "ns.a" })
	want := []server.Status{accepted("ns.a"), accepted("ns.b"),
		{ID: "ns.c", State: server.StateRejected, Reason: "plugin file missing"}, {ID: "ns.d", State: server.StateRejected, Reason: "untranslatable"}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if got := f.builds("ns.c"); got != 1 {
		t.Errorf("unselected ns.c builds = %d, want 1 (not retried by an unrelated Rebuild)", got)
	}

	// RetryRejected builds the configs that failed to build, not the translation-rejected.
	st = reg.RetryRejected()
	want = []server.Status{accepted("ns.a"), accepted("ns.b"), accepted("ns.c"), {ID: "ns.d", State: server.StateRejected, Reason: "untranslatable"}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("statuses after RetryRejected (-want +got):\n%s", diff)
	}
	if a2 := lookup(t, reg, "ns.a"); a2 == a1 || !f.cancelled(t, a1) || f.cancelled(t, a2) {
		t.Errorf("selected ns.a: not rebuilt, or the old chain not cancelled")
	}
	if lookup(t, reg, "ns.b") != b1 || f.builds("ns.b") != 1 {
		t.Errorf("unselected ns.b was rebuilt")
	}
	lookup(t, reg, "ns.c")
	if _, ok := reg.Lookup("ns.d"); ok {
		t.Errorf("translation-rejected ns.d serves after Rebuild")
	}

	// A rebuild that fails keeps the old chain.
	a2 := lookup(t, reg, "ns.a")
	f.fail("ns.a", errors.New("plugin changed and no longer loads"))
	st = reg.Rebuild(func(*extauthv1.ExtAuthConfig) bool { return true })
	if diff := cmp.Diff(server.Status{ID: "ns.a", State: server.StateRejected, Reason: "plugin changed and no longer loads", ServingPrevious: true}, st[0]); diff != "" {
		t.Errorf("status of the failed rebuild (-want +got):\n%s", diff)
	}
	if lookup(t, reg, "ns.a") != a2 || f.cancelled(t, a2) {
		t.Errorf("a failed rebuild replaced or cancelled the serving chain")
	}
	if got := f.builds("ns.b"); got != 2 {
		t.Errorf("ns.b builds after Rebuild(all) = %d, want 2", got)
	}

	// Regression: an Apply of the same configs reported ns.a Accepted again without
	// building it, hiding that its plugin no longer loads. It stays Rejected, and it is
	// not built again by an Apply that does not change it (a build that waits on an
	// identity provider held up every unrelated change): RetryRejected builds it.
	listed := cfgs(cfg("ns.a", time.Second), cfg("ns.b", time.Second), cfg("ns.c", time.Second))
	before := f.builds("ns.a")
	st = reg.Apply(listed, nil)
	if diff := cmp.Diff(server.Status{ID: "ns.a", State: server.StateRejected, Reason: "plugin changed and no longer loads", ServingPrevious: true}, st[0]); diff != "" {
		t.Errorf("status of ns.a after an Apply, want still rejected (-want +got):\n%s", diff)
	}
	if got := f.builds("ns.a") - before; got != 0 {
		t.Errorf("ns.a built %d times by an Apply that did not change it, want 0", got)
	}
	if lookup(t, reg, "ns.a") != a2 {
		t.Errorf("the last good ns.a no longer serves")
	}
	f.fail("ns.a", nil)
	st = reg.RetryRejected()
	if !cmp.Equal(st[0], accepted("ns.a")) {
		t.Errorf("status of ns.a once it builds = %+v", st[0])
	}
	if a3 := lookup(t, reg, "ns.a"); a3 == a2 || !f.cancelled(t, a2) {
		t.Errorf("the rebuilt ns.a does not serve, or the old one is not cancelled")
	}
	// Now it is fresh: the next Apply keeps it.
	a3 := lookup(t, reg, "ns.a")
	reg.Apply(listed, nil)
	if lookup(t, reg, "ns.a") != a3 {
		t.Errorf("an unchanged, good ns.a was rebuilt")
	}
}

func TestRegistryClose(t *testing.T) {
	f := newFakeBuilds()
	reg := server.NewRegistry(f.build, zerolog.Nop())
	reg.Apply(cfgs(cfg("ns.a", time.Second), cfg("ns.b", time.Second)), nil)
	a, b := lookup(t, reg, "ns.a"), lookup(t, reg, "ns.b")
	reg.Close()
	for id, c := range map[string]*chain.Chain{"ns.a": a, "ns.b": b} {
		if _, ok := reg.Lookup(id); ok {
			t.Errorf("Lookup(%q) after Close still serves", id)
		}
		if !f.cancelled(t, c) {
			t.Errorf("chain %s not cancelled by Close", id)
		}
	}
}

// TestRegistryLookupDuringApply runs lookups while configs change, for the race
// detector: a Lookup sees either the old or the new chain, never a torn map.
func TestRegistryLookupDuringApply(t *testing.T) {
	f := newFakeBuilds()
	reg := server.NewRegistry(f.build, zerolog.Nop())
	reg.Apply(cfgs(cfg("ns.a", time.Millisecond)), nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var missing int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if _, ok := reg.Lookup("ns.a"); !ok {
				missing++
			}
		}
	}()
	for i := range 200 {
		reg.Apply(cfgs(cfg("ns.a", time.Duration(i+2)*time.Millisecond), cfg(fmt.Sprintf("ns.x%d", i), time.Second)), nil)
	}
	cancel()
	wg.Wait()
	if missing > 0 {
		t.Errorf("ns.a was missing from %d lookups while it was being replaced", missing)
	}
	if got := f.builds("ns.a"); got != 201 {
		t.Errorf("builds of ns.a = %d, want 201", got)
	}
	if st := reg.Statuses(); len(st) != 2 || !strings.HasPrefix(st[1].ID, "ns.x") {
		t.Errorf("Statuses = %+v, want ns.a and the last ns.x", st)
	}
}
