package snapshots_test

import (
	"encoding/json"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/snapshots"
)

func TestRedacted(t *testing.T) {
	sds, err := snapshots.ProtoJSON(&tlsv3.Secret{Name: "tls", Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
		CertificateChain: &core.DataSource{Specifier: &core.DataSource_InlineString{InlineString: "CERT"}},
		PrivateKey:       &core.DataSource{Specifier: &core.DataSource_InlineBytes{InlineBytes: []byte("KEY")}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{
			name: "SDS secret: the private key, not the certificate",
			in:   sds,
			want: `{"name":"tls","tlsCertificate":{"certificateChain":{"inlineString":"CERT"},"privateKey":{"inlineBytes":"<redacted>"}}}`,
		},
		{
			name: "Secret data and stringData keep their keys",
			in:   json.RawMessage(`{"kind":"Secret","type":"Opaque","data":{"a":"QQ==","b":"Qg=="},"stringData":{"c":"C"}}`),
			want: `{"data":{"a":"<redacted>","b":"<redacted>"},"kind":"Secret","stringData":{"c":"<redacted>"},"type":"Opaque"}`,
		},
		{
			name: "kubectl's copy of a Secret",
			in:   json.RawMessage(`{"kind":"Secret","metadata":{"name":"s","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"a\":\"QQ==\"}}","team":"x"}}}`),
			want: `{"kind":"Secret","metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"<redacted>","team":"x"},"name":"s"}}`,
		},
		{
			name: "data of what is not a Secret stays",
			in:   json.RawMessage(`{"kind":"ConfigMap","data":{"a":"A"}}`),
			want: `{"data":{"a":"A"},"kind":"ConfigMap"}`,
		},
		{
			name: "OIDC client secret and cookie key, deep in a list",
			in:   json.RawMessage(`{"steps":[{"oidc":{"clientId":"app","clientSecret":"S","session":{"cookie_encryption_key":"K"}}}]}`),
			want: `{"steps":[{"oidc":{"clientId":"app","clientSecret":"<redacted>","session":{"cookie_encryption_key":"<redacted>"}}}]}`,
		},
		{
			name: "numbers and empty values",
			in:   json.RawMessage(`{"password":12345,"privateKey":null,"n":1.50}`),
			want: `{"n":1.50,"password":"<redacted>","privateKey":null}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := snapshots.Redacted(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			_ = json.Unmarshal(got, &g)
			if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("Redacted (-want +got):\n%s", diff)
			}
		})
	}
}
