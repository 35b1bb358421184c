package build_test

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/build"
	"gatehouse.dev/gatehouse/loader"
)

func contract(settings map[string]string) *loader.Contract {
	return &loader.Contract{
		GatehouseVersion: "0.1.0", GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", Settings: settings,
		Main: loader.Module{Path: "gatehouse.dev/gatehouse", Version: "(devel)"},
		Modules: []loader.Module{
			{Path: "golang.org/x/sys", Version: "v0.48.0"},
			{Path: "golang.org/x/text", Version: "v0.42.0"},
			{Path: "example.com/forked", Version: "v1.0.0", Replace: &loader.Module{Path: "example.com/fork", Version: "v1.0.1"}},
			{Path: "example.com/local", Version: "v0.0.0", Replace: &loader.Module{Path: "../local", Version: "(devel)"}},
		},
	}
}

func TestPluginBuildFlags(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]string
		args     []string
		env      []string
	}{
		{
			name:     "plain host",
			settings: map[string]string{"CGO_ENABLED": "1", "GOAMD64": "v1"},
			args:     []string{"build", "-buildmode=plugin"},
			env:      []string{"CGO_ENABLED=1", "GOAMD64=v1", "GOARCH=amd64", "GOEXPERIMENT=", "GOFLAGS=-buildvcs=false", "GOOS=linux", "GOTOOLCHAIN=go1.26.8"},
		},
		{
			name: "host with -trimpath, tags, flags and an experiment",
			settings: map[string]string{"CGO_ENABLED": "1", "-trimpath": "true", "-tags": "netgo", "-gcflags": "-l",
				"GOEXPERIMENT": "arenas", "GOAMD64": "v3", "-ldflags": "-X main.v=1"},
			args: []string{"build", "-buildmode=plugin", "-trimpath", "-tags=netgo", "-gcflags=-l"},
			env:  []string{"CGO_ENABLED=1", "GOAMD64=v3", "GOARCH=amd64", "GOEXPERIMENT=arenas", "GOFLAGS=-buildvcs=false", "GOOS=linux", "GOTOOLCHAIN=go1.26.8"},
		},
		{
			name:     "race host",
			settings: map[string]string{"CGO_ENABLED": "1", "-race": "true"},
			args:     []string{"build", "-buildmode=plugin", "-race"},
			env:      []string{"CGO_ENABLED=1", "GOARCH=amd64", "GOEXPERIMENT=", "GOFLAGS=-buildvcs=false", "GOOS=linux", "GOTOOLCHAIN=go1.26.8"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, env := build.Flags(contract(tt.settings))
			sort.Strings(env)
			if diff := cmp.Diff(tt.args, args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.env, env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPluginBuildPins(t *testing.T) {
	tests := []struct {
		name     string
		list     []loader.Module
		replaced bool
		want     []string
	}{
		{
			name: "newer and older versions are both pinned to the host's",
			list: []loader.Module{{Path: "golang.org/x/sys", Version: "v0.49.0"}, {Path: "golang.org/x/text", Version: "v0.30.0"}},
			want: []string{"-require=golang.org/x/sys@v0.48.0", "-require=golang.org/x/text@v0.42.0"},
		},
		{
			name: "equal versions and modules the host lacks are left alone",
			list: []loader.Module{{Path: "golang.org/x/sys", Version: "v0.48.0"}, {Path: "example.com/only-plugin", Version: "v1.2.3"}},
		},
		{
			name: "a host replacement is copied",
			list: []loader.Module{{Path: "example.com/forked", Version: "v1.0.0"}},
			want: []string{"-replace=example.com/forked=example.com/fork@v1.0.1"},
		},
		{
			name: "a module the host has from a directory cannot be pinned",
			list: []loader.Module{{Path: "example.com/local", Version: "v0.0.1"}},
		},
		{
			name: "gatehouse is pinned to the host's release",
			list: []loader.Module{{Path: "gatehouse.dev/gatehouse", Version: "v0.0.9"}},
			want: []string{"-require=gatehouse.dev/gatehouse@v0.1.0"},
		},
		{
			name:     "unless it is replaced by --gatehouse-src",
			list:     []loader.Module{{Path: "gatehouse.dev/gatehouse", Version: "v0.0.0", Replace: &loader.Module{Path: "/src/gatehouse"}}},
			replaced: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range build.Pins(contract(nil), tt.list, tt.replaced) {
				got = append(got, p.Arg())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pins (-want +got):\n%s", diff)
			}
		})
	}
}
