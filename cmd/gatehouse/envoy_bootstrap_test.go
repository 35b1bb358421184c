package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/internal/envoysds"
)

// TestEnvoyCommands: the flags reach the builders, and mistakes exit 2 with the flag named.
func TestEnvoyCommands(t *testing.T) {
	out := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout, or in the error when code != 0
	}{
		{"plain", []string{"envoy", "bootstrap", "--xds", "cp:9977"}, 0, "cluster_name: xds_cluster"},
		{"mtls", []string{"envoy", "bootstrap", "--xds", "cp:9977", "--xds-tls-dir", "/etc/gatehouse/tls"}, 0, "path: /etc/envoy/sds-certificate.yaml"},
		{"mtls sds dir", []string{"envoy", "bootstrap", "--xds", "cp:9977", "--xds-tls-dir", "/tls", "--sds-dir", "/sds"}, 0, "path: /sds/sds-validation.yaml"},
		{"sds dir alone", []string{"envoy", "bootstrap", "--sds-dir", "/sds"}, 2, "--sds-dir needs --xds-tls-dir"},
		{"relative tls dir", []string{"envoy", "bootstrap", "--xds-tls-dir", "tls"}, 2, "not an absolute path"},
		{"sds", []string{"envoy", "sds", "--tls-dir", "/etc/gatehouse/tls", "--out", out}, 0, "wrote sds-certificate.yaml and sds-validation.yaml"},
		{"sds without out", []string{"envoy", "sds", "--tls-dir", "/etc/gatehouse/tls"}, 2, "--out is required"},
		{"sds relative", []string{"envoy", "sds", "--tls-dir", "tls", "--out", out}, 2, "not an absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code, err := runWith(tc.args, &stdout, &stderr)
			got := stdout.String()
			if err != nil {
				got = err.Error()
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("exit %d, %q; want %d and %q", code, got, tc.code, tc.want)
			}
		})
	}
	b, err := os.ReadFile(filepath.Join(out, envoysds.CertificateFile))
	if err != nil || !strings.Contains(string(b), "filename: /etc/gatehouse/tls/tls.key") {
		t.Errorf("%s: %v\n%s", envoysds.CertificateFile, err, b)
	}
}
