package server_test

import (
	"testing"

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
