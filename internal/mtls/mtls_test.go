package mtls_test

import (
	"crypto/tls"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/internal/mtls"
)

func generate(t *testing.T, out string, o mtls.GenerateOptions) map[string]string {
	t.Helper()
	o.Out = out
	if o.TrustDomain == "" {
		o.TrustDomain = "gatehouse.test"
	}
	o.Namespace = "gh"
	if o.Proxies == nil {
		o.Proxies = []string{"gateway-proxy", "other~edge"}
	}
	if o.CALifetime == 0 {
		o.CALifetime = 24 * time.Hour
	}
	if o.Lifetime == 0 {
		o.Lifetime = time.Hour
	}
	gen, err := mtls.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, g := range gen {
		dirs[g.Name] = g.Dir
	}
	return dirs
}

func load(t *testing.T, dir string) *mtls.Folder {
	t.Helper()
	f, err := mtls.Load(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// handshake runs one TLS handshake between server and client configs over loopback and
// returns the client's error and the peer the server saw.
func handshake(t *testing.T, server, client *tls.Config) (error, mtls.Peer) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	got := make(chan mtls.Peer, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			got <- mtls.Peer{}
			return
		}
		defer c.Close()
		tc := tls.Server(c, server)
		if tc.Handshake() != nil {
			got <- mtls.Peer{}
			return
		}
		p, _ := mtls.FromCert(tc.ConnectionState().PeerCertificates[0])
		_, _ = tc.Write([]byte("ok"))
		got <- p
	}()
	c, err := tls.Dial("tcp", lis.Addr().String(), client)
	if err == nil {
		defer c.Close()
		_, err = io.ReadFull(c, make([]byte, 2))
	}
	return err, <-got
}

func TestIdentitiesRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   mtls.Identity
		want string
	}{
		{"extauth", mtls.Identity{"td.example", "gh", "extauth"}, "spiffe://td.example/ns/gh/role/extauth"},
		{"controlplane", mtls.Identity{"td.example", "gh", "controlplane"}, "spiffe://td.example/ns/gh/role/controlplane"},
		{"proxy", mtls.Identity{"td.example", "gh", "gh~gateway-proxy"}, "spiffe://td.example/ns/gh/role/proxy/gateway-proxy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := tc.id.ID()
			if err != nil || id.String() != tc.want {
				t.Fatalf("ID() = %v, %v; want %s", id, err, tc.want)
			}
			back, err := mtls.Parse(id)
			if err != nil || back != tc.id {
				t.Fatalf("Parse = %+v, %v; want %+v", back, err, tc.id)
			}
		})
	}
	if _, err := (mtls.Identity{"td", "gh", "other~proxy"}).ID(); err == nil {
		t.Error("a proxy role of another namespace than the identity's was accepted")
	}
	if _, err := (mtls.Identity{"td", "gh", "admin"}).ID(); err == nil {
		t.Error("an unknown role was accepted")
	}
}

func TestMutualTLSAdmitsOnlyTheCAsRoles(t *testing.T) {
	dirs := generate(t, t.TempDir(), mtls.GenerateOptions{})
	other := generate(t, t.TempDir(), mtls.GenerateOptions{})
	cp := load(t, dirs["controlplane"])
	server := mtls.ServerConfig(cp, mtls.AnyMember)

	err, p := handshake(t, server, mtls.ClientConfig(load(t, dirs["extauth"]), mtls.RoleControlplane))
	if err != nil || p.Identity.Role != "extauth" || p.ID != "spiffe://gatehouse.test/ns/gh/role/extauth" {
		t.Fatalf("extauth: err %v, peer %+v", err, p)
	}
	err, p = handshake(t, server, mtls.ClientConfig(load(t, dirs["proxy-other-edge"]), mtls.RoleControlplane))
	if err != nil || p.Identity.Role != "other~edge" {
		t.Fatalf("proxy: err %v, peer %+v", err, p)
	}
	if err, _ := handshake(t, server, mtls.ClientConfig(load(t, other["extauth"]), mtls.RoleControlplane)); err == nil {
		t.Error("a client of another CA was admitted")
	}
	noCert := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}
	if err, _ := handshake(t, server, noCert); err == nil {
		t.Error("a client without a certificate was admitted")
	}
	tls12 := mtls.ClientConfig(load(t, dirs["extauth"]), mtls.RoleControlplane)
	tls12.MinVersion, tls12.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	if err, _ := handshake(t, server, tls12); err == nil {
		t.Error("a TLS 1.2 client was admitted")
	}
	// A client accepts only the control plane's role: extauth's certificate as a server is refused.
	if err, _ := handshake(t, mtls.ServerConfig(load(t, dirs["extauth"]), mtls.AnyMember), mtls.ClientConfig(load(t, dirs["proxy-gateway-proxy"]), mtls.RoleControlplane)); err == nil {
		t.Error("a client took an extauth certificate for the control plane")
	}
	// OnlyRoles("proxy") refuses extauth's certificate.
	proxiesOnly := mtls.ServerConfig(load(t, dirs["extauth"]), mtls.OnlyRoles("proxy"))
	if err, _ := handshake(t, proxiesOnly, mtls.ClientConfig(load(t, dirs["controlplane"]), mtls.RoleExtauth)); err == nil {
		t.Error("OnlyRoles(proxy) admitted the control plane's certificate")
	}
	if err, _ := handshake(t, proxiesOnly, mtls.ClientConfig(load(t, dirs["proxy-gateway-proxy"]), mtls.RoleExtauth)); err != nil {
		t.Errorf("OnlyRoles(proxy) refused a proxy: %v", err)
	}
}

func TestExpiredCertificateIsRefused(t *testing.T) {
	out := t.TempDir()
	dirs := generate(t, out, mtls.GenerateOptions{})
	expired := generate(t, out, mtls.GenerateOptions{Now: time.Now().Add(-2 * time.Hour)}) // same CA, lifetime 1h
	server := mtls.ServerConfig(load(t, dirs["controlplane"]), mtls.AnyMember)
	if err, _ := handshake(t, server, mtls.ClientConfig(load(t, expired["extauth"]), mtls.RoleControlplane)); err == nil {
		t.Error("an expired client certificate was admitted")
	}
}

func TestFolderReadsRotatedFilesAndKeepsTheLastGoodOnes(t *testing.T) {
	out := t.TempDir()
	dirs := generate(t, out, mtls.GenerateOptions{})
	f := load(t, dirs["extauth"])
	before, _ := f.GetX509SVID()

	// A new CA: every folder trusts both until the old one is retired.
	generate(t, out, mtls.GenerateOptions{RotateCA: true})
	time.Sleep(mtls.Recheck + 100*time.Millisecond)
	after, _ := f.GetX509SVID()
	if after.Certificates[0].Equal(before.Certificates[0]) {
		t.Fatal("the folder still serves the certificate it first read")
	}
	b, _ := f.GetX509BundleForTrustDomain(after.ID.TrustDomain())
	if n := len(b.X509Authorities()); n != 2 {
		t.Fatalf("after a rotation ca.crt holds %d CAs, want the new and the previous", n)
	}
	generate(t, out, mtls.GenerateOptions{RetirePreviousCA: true})
	time.Sleep(mtls.Recheck + 100*time.Millisecond)
	b, _ = f.GetX509BundleForTrustDomain(after.ID.TrustDomain())
	if n := len(b.X509Authorities()); n != 1 {
		t.Fatalf("after retiring the previous CA ca.crt holds %d CAs", n)
	}

	// A torn write keeps what was read last.
	good, _ := f.GetX509SVID()
	if err := os.WriteFile(filepath.Join(dirs["extauth"], mtls.CertFile), []byte("-----BEGIN CERT"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(mtls.Recheck + 100*time.Millisecond)
	kept, _ := f.GetX509SVID()
	if !kept.Certificates[0].Equal(good.Certificates[0]) {
		t.Fatal("a folder that no longer reads replaced its certificates")
	}
}

func TestGenerateRefusesAnotherTrustDomainsCA(t *testing.T) {
	out := t.TempDir()
	generate(t, out, mtls.GenerateOptions{})
	_, err := mtls.Generate(mtls.GenerateOptions{Out: out, TrustDomain: "other.test", Namespace: "gh", CALifetime: time.Hour, Lifetime: time.Hour})
	if err == nil || !strings.Contains(err.Error(), "another trust domain") {
		t.Fatalf("err = %v", err)
	}
}

func TestKeysAreWrittenPrivate(t *testing.T) {
	out := t.TempDir()
	dirs := generate(t, out, mtls.GenerateOptions{})
	for _, p := range []string{filepath.Join(dirs["extauth"], mtls.KeyFile), filepath.Join(out, mtls.CADir, mtls.CAKeyFile)} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", p, fi.Mode().Perm(), err)
		}
	}
}
