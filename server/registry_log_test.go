package server_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/server"
)

// Regression: every Apply (any file edit) and every retry logged each rejected config
// again, though nothing about it had changed; and a config that went back to the
// version serving (Rejected to Accepted without a build) was not logged at all.
func TestRegistryLogsEachChangeOnce(t *testing.T) {
	f := newFakeBuilds()
	logs := &syncbuf.Buffer{}
	reg := server.NewRegistry(f.build, zerolog.New(logs))
	lines := func() []string {
		out := strings.Split(strings.TrimSpace(logs.Take()), "\n")
		if len(out) == 1 && out[0] == "" {
			return nil
		}
		return out
	}
	good := cfg("ns.a", time.Second)
	f.fail("ns.broken", errors.New("no plugin"))
	untranslatable := map[string]error{"ns.bad": errors.New("spec.configs: at least one step is required")}

	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{
			name: "first apply",
			do:   func() { reg.Apply(cfgs(good, cfg("ns.broken", time.Second)), untranslatable) },
			want: []string{
				`{"level":"info","config_id":"ns.a","steps":1,"message":"auth config accepted"}`,
				`{"level":"error","config_id":"ns.bad","error":"spec.configs: at least one step is required","message":"auth config rejected"}`,
				`{"level":"error","config_id":"ns.broken","error":"no plugin","message":"auth config rejected"}`,
			},
		},
		{
			name: "the same again",
			do:   func() { reg.Apply(cfgs(good, cfg("ns.broken", time.Second)), untranslatable) },
		},
		{
			name: "a retry that fails the same way",
			do:   func() { reg.RetryRejected() },
		},
		{
			name: "a rebuild for a changed plugin is logged even when it fails the same way",
			do: func() {
				reg.Rebuild(func(c *extauthv1.ExtAuthConfig) bool { return c.GetConfigId() == "ns.broken" })
			},
			want: []string{`{"level":"error","config_id":"ns.broken","error":"no plugin","message":"auth config rejected"}`},
		},
		{
			name: "a serving config rejected by translation",
			do: func() {
				reg.Apply(cfgs(cfg("ns.broken", time.Second)), map[string]error{"ns.a": errors.New("bad edit"), "ns.bad": untranslatable["ns.bad"]})
			},
			want: []string{`{"level":"error","config_id":"ns.a","error":"bad edit","serving_previous":true,"message":"auth config rejected"}`},
		},
		{
			name: "back to the version that serves",
			do:   func() { reg.Apply(cfgs(good, cfg("ns.broken", time.Second)), untranslatable) },
			want: []string{`{"level":"info","config_id":"ns.a","recovered":true,"message":"auth config accepted"}`},
		},
		{
			name: "a retry that succeeds",
			do: func() {
				f.fail("ns.broken", nil)
				reg.RetryRejected()
			},
			want: []string{`{"level":"info","config_id":"ns.broken","steps":1,"recovered":true,"message":"auth config accepted"}`},
		},
	}
	for _, st := range steps {
		st.do()
		got := lines()
		if diff := cmp.Diff(st.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: log (-want +got):\n%s", st.name, diff)
		}
	}
}
