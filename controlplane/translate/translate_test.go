package translate_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

func settings(name, timeout string) *apiv1.Settings {
	s := &apiv1.Settings{Metadata: apiv1.Metadata{Name: name, Namespace: "ns"}}
	if timeout != "-" {
		s.Spec.Extauth = &apiv1.ExtauthSettings{RequestTimeout: timeout}
	}
	return s
}

func TestRequestTimeout(t *testing.T) {
	tests := []struct {
		name     string
		settings []*apiv1.Settings
		want     time.Duration
		wantErr  string
	}{
		{name: "no settings", want: translate.DefaultRequestTimeout},
		{name: "settings without extauth", settings: []*apiv1.Settings{settings("a", "-")}, want: translate.DefaultRequestTimeout},
		{name: "empty value", settings: []*apiv1.Settings{settings("a", "")}, want: translate.DefaultRequestTimeout},
		{name: "set", settings: []*apiv1.Settings{settings("a", "1.5s")}, want: 1500 * time.Millisecond},
		{name: "first one that sets it", settings: []*apiv1.Settings{settings("a", "-"), settings("b", "300ms"), settings("c", "9s")}, want: 300 * time.Millisecond},
		{
			name:     "zero",
			settings: []*apiv1.Settings{settings("a", "0s")},
			want:     translate.DefaultRequestTimeout,
			wantErr:  `settings ns.a: spec.extauth.requestTimeout: "0s" is not a positive duration such as "1s"`,
		},
		{
			name:     "no unit",
			settings: []*apiv1.Settings{settings("a", "200")},
			want:     translate.DefaultRequestTimeout,
			wantErr:  `settings ns.a: spec.extauth.requestTimeout: "200" is not a positive duration such as "1s"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.RequestTimeout(&apiv1.Set{Settings: tt.settings})
			if got != tt.want {
				t.Errorf("RequestTimeout = %v, want %v", got, tt.want)
			}
			var gotErr string
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("error = %q, want %q", gotErr, tt.wantErr)
			}
		})
	}
}

func TestResourceErrorListsEveryProblem(t *testing.T) {
	set := &apiv1.Set{
		AuthConfigs: []*apiv1.AuthConfig{{
			Metadata: apiv1.Metadata{Name: "ac", Namespace: "ns"},
			Spec:     apiv1.AuthConfigSpec{Configs: []apiv1.AuthStep{{}, {PluginAuth: &apiv1.PluginAuth{}}}},
		}},
	}
	tests := []struct {
		name string
		err  error
		want *translate.ResourceError
	}{
		{
			name: "upstream",
			err: func() error {
				_, err := translate.ClusterOf(&apiv1.Upstream{
					Metadata: apiv1.Metadata{Name: "u", Namespace: "ns"},
					Spec:     apiv1.UpstreamSpec{Static: &apiv1.StaticUpstream{Hosts: []apiv1.Host{{Port: 0}}}},
				}, "")
				return err
			}(),
			want: &translate.ResourceError{Resource: "upstream ns.u", Problems: []string{
				"spec.static.hosts[0].addr: is required",
				"spec.static.hosts[0].port: 0 is not a port",
			}},
		},
		{
			name: "authconfig",
			err:  translate.ExtAuth(set)[0].Err,
			want: &translate.ResourceError{Resource: "authconfig ns.ac", Problems: []string{
				"spec.configs[0]: is empty; set pluginAuth or oauth2",
				"spec.configs[1].pluginAuth.name: is required",
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var re *translate.ResourceError
			if !errors.As(tt.err, &re) {
				t.Fatalf("error %v is not a *ResourceError", tt.err)
			}
			if diff := cmp.Diff(tt.want, re); diff != "" {
				t.Errorf("ResourceError (-want +got):\n%s", diff)
			}
			if got, want := re.Error(), tt.want.Resource+": "+tt.want.Problems[0]+"; "+tt.want.Problems[1]; got != want {
				t.Errorf("Error() = %q, want %q", got, want)
			}
		})
	}
}
