package validate

import (
	"fmt"
	"slices"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// CheckOutput compares the last edge of v with the one a pass over every entry gives
// for in, and says how many edges so far were patched rather than made whole.
func CheckOutput(v *Validator, in *source.Input) (patched int, err error) {
	got, want := v.edge, v.outputAll(in)
	want.Accepted.Extauthz = got.Accepted.Extauthz
	switch {
	case !slices.Equal(got.Resources.Slice(), want.Resources.Slice()):
		err = fmt.Errorf("resources differ")
	case !slices.Equal(got.Accepted.Clusters.Slice(), want.Accepted.Clusters.Slice()):
		err = fmt.Errorf("clusters differ")
	case !slices.Equal(got.Accepted.VirtualHosts.Slice(), want.Accepted.VirtualHosts.Slice()):
		err = fmt.Errorf("virtual hosts differ")
	case !slices.Equal(got.ExtAuthConfigs.Slice(), want.ExtAuthConfigs.Slice()):
		err = fmt.Errorf("ext auth configs differ")
	case len(got.Accepted.TLSCerts) != len(want.Accepted.TLSCerts):
		err = fmt.Errorf("TLS certificates differ")
	case got.Accepted.Settings != want.Accepted.Settings:
		err = fmt.Errorf("settings differ")
	}
	return v.patched, err
}
