package envoysds_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"gatehouse.dev/gatehouse/internal/envoysds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

func TestRoleSAN(t *testing.T) {
	re := regexp.MustCompile(envoysds.RoleSAN(mtls.RoleExtauth))
	for id, want := range map[string]bool{
		"spiffe://gatehouse.test/ns/gh/role/extauth":            true,
		"spiffe://other/ns/x/role/extauth":                      true,
		"spiffe://gatehouse.test/ns/gh/role/controlplane":       false,
		"spiffe://gatehouse.test/ns/gh/role/proxy/gw":           false,
		"spiffe://gatehouse.test/ns/gh/role/extauth/x":          false,
		"spiffe://gatehouse.test/a/ns/gh/role/extauth":          false,
		"xspiffe://gatehouse.test/ns/gh/role/extauth":           false,
		"spiffe://gatehouse.test/ns/gh/role/proxy/role/extauth": false,
	} {
		if got := re.MatchString(id); got != want {
			t.Errorf("%s: match %t, want %t", id, got, want)
		}
	}
}

func TestCheckDir(t *testing.T) {
	for _, tc := range []struct{ dir, err string }{
		{"/etc/envoy", ""},
		{"", "is required"},
		{"etc/envoy", "not an absolute path"},
		{"/etc/envoy/", "not a clean path"},
		{"/etc/../envoy", "not a clean path"},
		{"/etc/en\nvoy", "control character"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			err := envoysds.CheckDir(tc.dir)
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("CheckDir(%q) = %v, want %q", tc.dir, err, tc.err)
			}
		})
	}
}

// TestWriteAndRead: the files Write makes read back (as the dev gateway reads them) to
// the Secrets of the folder, which passes ValidateAll, and Folder finds the folder.
func TestWriteAndRead(t *testing.T) {
	tlsDir, sdsDir := "/etc/gatehouse/tls", t.TempDir()
	if err := envoysds.Write(tlsDir, sdsDir); err != nil {
		t.Fatal(err)
	}
	ctx := envoysds.UpstreamTLS(sdsDir, mtls.RoleExtauth)
	if err := ctx.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	cert, err := envoysds.ReadSecret(ctx.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()[0])
	if err != nil {
		t.Fatal(err)
	}
	val, err := envoysds.ReadSecret(ctx.GetCommonTlsContext().GetCombinedValidationContext().GetValidationContextSdsSecretConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got := cert.GetTlsCertificate().GetPrivateKey().GetFilename(); got != "/etc/gatehouse/tls/tls.key" {
		t.Errorf("key file %q", got)
	}
	dir, err := envoysds.Folder(cert, val)
	if err != nil || dir != tlsDir {
		t.Errorf("Folder = %q, %v; want %q", dir, err, tlsDir)
	}
	if _, err := envoysds.Folder(val, cert); err == nil {
		t.Error("Folder accepts the secrets swapped")
	}
	cert.GetTlsCertificate().PrivateKey = &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: "/elsewhere/tls.key"}}
	if _, err := envoysds.Folder(cert, val); err == nil {
		t.Error("Folder accepts a key in another folder")
	}
}

func TestReadSecretRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := envoysds.Write("/etc/gatehouse/tls", dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("resources: [{\"@type\": type.googleapis.com/google.protobuf.Duration, value: 1s}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  *tlsv3.SdsSecretConfig
		err  string
	}{
		{"wrong secret name", envoysds.SecretConfig(dir, envoysds.CertificateFile, "other"), `holds no secret "other"`},
		{"missing file", envoysds.SecretConfig(dir, "none.yaml", envoysds.CertificateSecret), "no such file"},
		{"not a secret", envoysds.SecretConfig(dir, "bad.yaml", "x"), "not a Secret"},
		{"ads", &tlsv3.SdsSecretConfig{Name: "x"}, "only a path_config_source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := envoysds.ReadSecret(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
		})
	}
}
