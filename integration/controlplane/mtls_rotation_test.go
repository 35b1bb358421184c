package controlplane_test

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// TestXDSCertificatesRotateUnderOpenStreams: the CA and every certificate are replaced
// (gatehouse certs generate --rotate-ca) while the control plane, extauth and the
// gateway hold their streams: the streams keep working (an edit still arrives, nobody
// reconnected), new connections get the control plane's new certificate, a client of
// the old CA is admitted while both are trusted and refused once the old CA is retired.
func TestXDSCertificatesRotateUnderOpenStreams(t *testing.T) {
	certs := generateCerts(t)
	s := startSystemTLS(t, "alpha", certs)
	s.expect(t, "/", alpha, http.StatusOK)

	old := t.TempDir()
	if err := os.CopyFS(old, os.DirFS(filepath.Join(certs, "extauth"))); err != nil {
		t.Fatal(err)
	}
	oldCA, _ := os.ReadFile(filepath.Join(certs, mtls.CADir, mtls.CAFile))

	certsCLI(t, certs, "--rotate-ca")
	time.Sleep(mtls.Recheck + 200*time.Millisecond)
	newCA, _ := os.ReadFile(filepath.Join(certs, mtls.CADir, mtls.CAFile))
	if string(newCA) == string(oldCA) {
		t.Fatal("--rotate-ca kept the CA")
	}

	t.Run("open streams keep working", func(t *testing.T) {
		testbin.WriteFile(t, filepath.Join(s.dir, "auth_config.yaml"), authConfig("plugin-auth", "required_header", "gamma"))
		s.expect(t, "/", gamma, http.StatusOK)
		s.expect(t, "/", alpha, http.StatusForbidden)
		for name, p := range map[string]string{"extauth": s.ex.Output(), "gateway": s.gateway.Output()} {
			if n := strings.Count(p, "connected to the control plane"); n != 1 {
				t.Errorf("%s connected %d times; the rotation should not have cut its stream", name, n)
			}
		}
	})

	t.Run("a new connection gets the new certificate", func(t *testing.T) {
		f, err := mtls.Load(filepath.Join(certs, "extauth"), zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		c, err := tls.Dial("tcp", s.xds, mtls.ClientConfig(f, mtls.RoleControlplane))
		if err != nil {
			t.Fatalf("a client with the new certificates: %v", err)
		}
		defer c.Close()
		cas, _ := mtls.ParseCertificates(newCA)
		if err := c.ConnectionState().PeerCertificates[0].CheckSignatureFrom(cas[0]); err != nil {
			t.Errorf("the control plane presents a certificate the new CA did not sign: %v", err)
		}
		a := adsAttempt(t, s.xds, clientCreds(t, filepath.Join(certs, "extauth")), "new", xds.RoleExtauth, xds.ExtAuthConfigType, 2*time.Second)
		if a.resources == 0 {
			t.Errorf("a client with the new certificates received nothing: %v", a.err)
		}
	})

	// The old certificate with the new bundle: a pod whose certificate was issued by the old CA.
	testbin.WriteFile(t, filepath.Join(old, mtls.CAFile), string(readFile(t, filepath.Join(certs, "extauth", mtls.CAFile))))
	t.Run("the old CA is trusted until it is retired", func(t *testing.T) {
		a := adsAttempt(t, s.xds, clientCreds(t, old), "old", xds.RoleExtauth, xds.ExtAuthConfigType, 2*time.Second)
		if a.resources == 0 {
			t.Errorf("a certificate of the previous CA was refused while both are trusted: %v", a.err)
		}
		certsCLI(t, certs, "--retire-previous-ca")
		time.Sleep(mtls.Recheck + 200*time.Millisecond)
		a = adsAttempt(t, s.xds, clientCreds(t, old), "old", xds.RoleExtauth, xds.ExtAuthConfigType, 2*time.Second)
		if a.resources != 0 || status.Code(a.err) != codes.Unavailable {
			t.Errorf("a certificate of the retired CA got %d resources, %v; want none, refused by TLS", a.resources, a.err)
		}
		testbin.WriteFile(t, filepath.Join(s.dir, "auth_config.yaml"), authConfig("plugin-auth", "required_header", "delta"))
		s.expect(t, "/", map[string]string{"x-required": "delta"}, http.StatusOK)
	})
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
