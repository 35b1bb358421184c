package server_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server"
)

// A config is rebuilt for a changed plugin file only when one of its plugin steps
// loads it.
func TestUsesPluginFile(t *testing.T) {
	cfg := &extauthv1.ExtAuthConfig{Steps: []*extauthv1.Step{
		{Kind: &extauthv1.Step_PluginAuth{PluginAuth: &extauthv1.PluginAuth{PluginFileName: "a.so"}}},
		{Kind: &extauthv1.Step_PluginAuth{PluginAuth: &extauthv1.PluginAuth{PluginFileName: "b.so"}}},
	}}
	for _, tt := range []struct {
		files []string
		want  bool
	}{
		{[]string{"b.so"}, true},
		{[]string{"c.so", "a.so"}, true},
		{[]string{"c.so"}, false},
		{nil, false},
	} {
		if got := server.UsesPluginFile(cfg, tt.files); got != tt.want {
			t.Errorf("UsesPluginFile(%v) = %t, want %t", tt.files, got, tt.want)
		}
	}
	if server.UsesPluginFile(&extauthv1.ExtAuthConfig{}, []string{"a.so"}) {
		t.Error("a config without plugin steps uses a plugin file")
	}
}

// The plugin files trial-loaded ahead of use are those no config given names, built or
// not (a config whose build failed still names its file).
func TestUnusedPluginFiles(t *testing.T) {
	f := newFakeBuilds()
	reg := server.NewRegistry(f.build, zerolog.Nop())
	f.fail("ns.b", errors.New("plugin file missing"))
	b := cfg("ns.b", time.Second)
	b.Steps[0].GetPluginAuth().PluginFileName = "b.so"
	reg.Apply(cfgs(cfg("ns.a", time.Second), b), nil) // ns.a names p.so
	got := reg.UnusedPluginFiles([]string{"new.so", "p.so", "b.so", "other.so"})
	if d := cmp.Diff([]string{"new.so", "other.so"}, got); d != "" {
		t.Errorf("unused (-want +got):\n%s", d)
	}
}
