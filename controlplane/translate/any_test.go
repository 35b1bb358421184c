package translate

import (
	"testing"
	"unsafe"

	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TestMustAnyIsAnypbNew: mustAny (which keeps one type URL string per type) makes what
// anypb.New makes.
func TestMustAnyIsAnypbNew(t *testing.T) {
	tests := []struct {
		name string
		m    proto.Message
	}{
		{name: "per route", m: &extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_CheckSettings{
			CheckSettings: &extauthzv3.CheckSettings{ContextExtensions: map[string]string{ConfigIDKey: "ns.ac"}},
		}}},
		{name: "duration", m: durationpb.New(ConnectTimeout)},
		{name: "empty", m: &extauthzv3.ExtAuthzPerRoute{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := anypb.New(tt.m)
			if err != nil {
				t.Fatal(err)
			}
			got := mustAny(tt.m)
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("mustAny (-anypb.New +got):\n%s", diff)
			}
			if again := mustAny(tt.m); unsafe.StringData(again.GetTypeUrl()) != unsafe.StringData(got.GetTypeUrl()) {
				t.Errorf("two Anys of %s hold two type URL strings", tt.name)
			}
		})
	}
}
