package controlplane

import (
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// Link is how the measuring ADS clients reach the control plane: plain text (the
// zero value) or, with certs set, mutual TLS.
type Link struct {
	// certs is an mtls.Generate output folder: the control plane serves with its
	// controlplane folder, and each client presents its role's folder.
	Certs string
}

// serverArgs are the control plane's flags for l.
func (l Link) serverArgs() []string {
	if l.Certs == "" {
		return nil
	}
	return []string{"--xds-tls-dir", filepath.Join(l.Certs, mtls.RoleControlplane)}
}

// credentials are what a client of role dials with: its role's certificate over mutual
// TLS, as extauth and the gateway do, or plain text.
func (l Link) credentials(role string) (credentials.TransportCredentials, error) {
	if l.Certs == "" {
		return insecure.NewCredentials(), nil
	}
	dir := filepath.Join(l.Certs, mtls.RoleExtauth)
	if role != xds.RoleExtauth {
		dir = filepath.Join(l.Certs, "proxy-"+proxyName(role))
	}
	f, err := mtls.LoadAs(dir, role, zerolog.Nop())
	if err != nil {
		return nil, err
	}
	return mtls.ClientCredentials(f, mtls.RoleControlplane), nil
}

// proxyName is the name part of a proxy role "<namespace>~<name>".
func proxyName(role string) string { return role[strings.LastIndexByte(role, '~')+1:] }
