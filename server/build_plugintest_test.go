package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/plugintest"
	"gatehouse.dev/gatehouse/server"
)

// A plugin author's unit tests (pluginapi/plugintest) and the server reject the same
// configs with the same words: the server's reason is plugintest's error behind the
// step's field path. The config reaches the server as an AuthConfig's `config` object
// (a protobuf Struct) and plugintest as the same object in JSON.
func TestServerAndPlugintestRejectConfigsAlike(t *testing.T) {
	const prefix = "spec.configs[0].pluginAuth (rh): "
	tests := []struct {
		name   string
		plugin *fakePlugin
		config map[string]any
	}{
		{name: "unknown field", plugin: &fakePlugin{}, config: map[string]any{"RequiredHeader": "x", "AllowedValue": "a"}},
		{name: "wrong type", plugin: &fakePlugin{}, config: map[string]any{"RequiredHeader": 7}},
		{name: "list for a string", plugin: &fakePlugin{}, config: map[string]any{"RequiredHeader": []any{"x"}}},
		{name: "object for a list", plugin: &fakePlugin{}, config: map[string]any{"AllowedValues": map[string]any{"a": true}}},
		{name: "config instance not a pointer", plugin: &fakePlugin{newConfig: func() any { return headerConfig{} }}, config: map[string]any{}},
		{name: "rejected by GetAuthService", plugin: &fakePlugin{getService: func(*headerConfig) error { return errors.New("AllowedValues must not be empty") }}, config: map[string]any{"RequiredHeader": "x"}},
		{name: "Start panics", plugin: &fakePlugin{start: func(context.Context) error { panic("boom") }}, config: map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &server.Builder{Plugins: &fakePlugins{plugins: map[string]pluginapi.ExtAuthPlugin{"rh.so/Plugin": tt.plugin}}}
			_, serverErr := b.Build(context.Background(), &extauthv1.ExtAuthConfig{ConfigId: "ns.x", Steps: []*extauthv1.Step{pluginStep("rh", "rh.so", "Plugin", tt.config)}})
			config, err := json.Marshal(tt.config)
			if err != nil {
				t.Fatal(err)
			}
			_, testErr := plugintest.NewService(context.Background(), tt.plugin, string(config))
			if serverErr == nil || testErr == nil {
				t.Fatalf("server error %v, plugintest error %v; want both to reject the config", serverErr, testErr)
			}
			if got, want := serverErr.Error(), prefix+testErr.Error(); got != want {
				t.Errorf("the server and plugintest disagree:\nserver     %q\nplugintest %q", got, want)
			}
		})
	}
}
