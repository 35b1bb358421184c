package mtls

import (
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/controlplane"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestMTLSStartGoal(t *testing.T) {
	arm := func(round int, mode string, readyMs int) cpArm {
		return cpArm{Round: round, Mode: mode, StartFigures: controlplane.StartFigures{ReadyProxy: time.Duration(readyMs) * time.Millisecond}}
	}
	tests := []struct {
		name        string
		arms        []cpArm
		want        []float64
		wantVerdict string
	}{
		{
			name: "median of per-round ratios, whatever order the modes ran in",
			arms: []cpArm{
				arm(1, modePlain, 1000), arm(1, modeMTLS, 1050),
				arm(2, modeMTLS, 1300), arm(2, modePlain, 1000), // the outlier round
				arm(3, modePlain, 1200), arm(3, modeMTLS, 1260),
			},
			want: []float64{1.05, 1.3, 1.05}, wantVerdict: "**undecided**: the median's 75 % interval is 1.05× to 1.30×",
		},
		{
			name: "met when every round is within",
			arms: []cpArm{
				arm(1, modePlain, 1000), arm(1, modeMTLS, 1050), arm(2, modeMTLS, 1080), arm(2, modePlain, 1000),
			},
			want: []float64{1.05, 1.08}, wantVerdict: "met",
		},
		{
			name: "a round without plain text counts for no ratio",
			arms: []cpArm{arm(1, modePlain, 1000), arm(1, modeMTLS, 1200), arm(2, modeMTLS, 900)},
			want: []float64{1.2}, wantVerdict: "**not met**",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs := (&mtlsResult{N: 10000, Starts: tt.arms}).goals()
			if len(gs) != 1 {
				t.Fatalf("goals() = %d goals, want 1", len(gs))
			}
			if diff := cmp.Diff(tt.want, gs[0].Rounds, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("rounds (-want +got):\n%s", diff)
			}
			if got := gs[0].Verdict(); gs[0].Target != 1.1 || got != tt.wantVerdict {
				t.Errorf("target %v, verdict %q; want 1.1, %q", gs[0].Target, got, tt.wantVerdict)
			}
		})
	}
}
