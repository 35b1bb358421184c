package v1_test

import (
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

func TestKubeUpstreamName(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := []struct {
		name, ns, svc string
		port          int
		want          string
	}{
		{name: "plain", ns: "default", svc: "echo", port: 8080, want: "default-echo-8080"},
		{name: "sanitized", ns: "Team_A", svc: "my.svc", port: 80, want: "team-a-my-svc-80"},
		{name: "exactly 63", ns: "n", svc: strings.Repeat("s", 56), port: 1234, want: "n-" + strings.Repeat("s", 56) + "-1234"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := apiv1.KubeUpstreamName(tt.ns, tt.svc, tt.port); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("cut with a hash", func(t *testing.T) {
		a := apiv1.KubeUpstreamName("default", long+"-x", 80)
		b := apiv1.KubeUpstreamName("default", long+"-y", 80)
		if len(a) != 63 || len(b) != 63 {
			t.Fatalf("lengths %d and %d, want 63", len(a), len(b))
		}
		if a == b {
			t.Errorf("two names cut to the same %q", a)
		}
		if !strings.HasPrefix(a, "default-aaaa") || strings.Contains(a, "--") {
			t.Errorf("%q does not keep the readable prefix", a)
		}
	})
}
