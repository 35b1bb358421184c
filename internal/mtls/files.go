package mtls

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spiffe/go-spiffe/v2/bundle/x509bundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"
)

// The files of a certificate folder: a mounted Kubernetes TLS Secret plus its CA.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// Recheck is how often, at most, a Folder looks at its files again.
const Recheck = time.Second

// Folder is a certificate folder (CertFile, KeyFile, CAFile). It is looked at again,
// at most every Recheck, whenever a handshake asks for it, and read again when a file
// changed (a rotated Secret: Kubernetes swaps the whole folder); a folder that no longer
// reads keeps the last good certificates and says so in the log. It is an
// x509svid.Source and an x509bundle.Source for go-spiffe's TLS configurations.
type Folder struct {
	dir string
	log zerolog.Logger

	mu      sync.Mutex
	checked time.Time
	stamps  [3]stamp
	svid    *x509svid.SVID
	bundle  *x509bundle.Bundle
	self    Peer
	failed  string // the last reload error logged, so that it is logged once
}

// stamp tells whether a file changed: Kubernetes replaces files, editors rewrite them.
type stamp struct {
	ino   uint64
	size  int64
	mtime time.Time
}

// Load reads the certificate folder dir. Its certificate must name a role (Parse).
func Load(dir string, log zerolog.Logger) (*Folder, error) {
	f := &Folder{dir: dir, log: log.With().Str("tls_dir", dir).Logger()}
	stamps := f.stat()
	if err := f.read(stamps); err != nil {
		return nil, err
	}
	f.checked = time.Now()
	remember(f)
	return f, nil
}

// Dir is the folder's path.
func (f *Folder) Dir() string { return f.dir }

// Self is what this process's own certificate names, as last read.
func (f *Folder) Self() Peer {
	f.refresh()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.self
}

// GetX509SVID is this process's certificate and key, as last read.
func (f *Folder) GetX509SVID() (*x509svid.SVID, error) {
	f.refresh()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.svid, nil
}

// GetX509BundleForTrustDomain is the CAs of CAFile for this process's own trust domain;
// any other trust domain has none.
func (f *Folder) GetX509BundleForTrustDomain(td spiffeid.TrustDomain) (*x509bundle.Bundle, error) {
	f.refresh()
	f.mu.Lock()
	defer f.mu.Unlock()
	if td != f.bundle.TrustDomain() {
		return nil, fmt.Errorf("mtls: trust domain %q is not %q, the trust domain of %s", td, f.bundle.TrustDomain(), filepath.Join(f.dir, CertFile))
	}
	return f.bundle, nil
}

// refresh reads the folder again when a file changed since it was last read.
func (f *Folder) refresh() {
	f.mu.Lock()
	if time.Since(f.checked) < Recheck {
		f.mu.Unlock()
		return
	}
	f.checked = time.Now()
	old := f.stamps
	f.mu.Unlock()

	stamps := f.stat()
	if stamps == old {
		return
	}
	err := f.read(stamps)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err == nil:
		f.failed = ""
		f.log.Info().Str("id", f.self.ID).Time("not_after", f.self.NotAfter).Msg("certificates read again")
	case err.Error() != f.failed:
		f.failed = err.Error()
		f.log.Error().Err(err).Msg("certificates changed but do not read; keeping the last good ones")
	}
}

func (f *Folder) stat() [3]stamp {
	var out [3]stamp
	for i, name := range []string{CertFile, KeyFile, CAFile} {
		fi, err := os.Stat(filepath.Join(f.dir, name))
		if err != nil {
			continue
		}
		out[i] = stamp{size: fi.Size(), mtime: fi.ModTime()}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			out[i].ino = st.Ino
		}
	}
	return out
}

// read loads the three files; on success they replace what is served.
func (f *Folder) read(stamps [3]stamp) error {
	svid, err := x509svid.Load(filepath.Join(f.dir, CertFile), filepath.Join(f.dir, KeyFile))
	if err != nil {
		return fmt.Errorf("mtls: %s: %w", f.dir, err)
	}
	self, err := FromCert(svid.Certificates[0])
	if err != nil {
		return fmt.Errorf("mtls: %s: %w", filepath.Join(f.dir, CertFile), err)
	}
	bundle, err := x509bundle.Load(svid.ID.TrustDomain(), filepath.Join(f.dir, CAFile))
	if err != nil {
		return fmt.Errorf("mtls: %s: %w", filepath.Join(f.dir, CAFile), err)
	}
	if bundle.Empty() {
		return fmt.Errorf("mtls: %s holds no CA certificate", filepath.Join(f.dir, CAFile))
	}
	f.mu.Lock()
	f.svid, f.bundle, f.self, f.stamps = svid, bundle, self, stamps
	f.mu.Unlock()
	return nil
}

// LoadAs reads the certificate folder dir, whose certificate must name role ("proxy":
// any gateway proxy role).
func LoadAs(dir, role string, log zerolog.Logger) (*Folder, error) {
	f, err := Load(dir, log)
	if err != nil {
		return nil, err
	}
	if err := OnlyRoles(role)(f.self); err != nil {
		return nil, fmt.Errorf("mtls: %s: the certificate %s names the role %q, not %q", dir, f.self.ID, f.self.Identity.Role, role)
	}
	return f, nil
}
