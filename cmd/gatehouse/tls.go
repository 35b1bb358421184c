package main

import (
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// xdsCredentials are the credentials a client of the control plane dials with: mutual
// TLS from the certificate folder dir, whose certificate must name role; nil (plain
// text) when dir is "".
func xdsCredentials(log zerolog.Logger, dir, role string) (credentials.TransportCredentials, error) {
	if dir == "" {
		return nil, nil
	}
	f, err := mtls.LoadAs(dir, role, log)
	if err != nil {
		return nil, err
	}
	return mtls.ClientCredentials(f, mtls.RoleControlplane), nil
}

// extauthTLS are the ext_authz server's options for serving mutual TLS from the
// certificate folder dir (none when dir is ""): only gateway proxies are admitted.
func extauthTLS(log zerolog.Logger, dir string) ([]grpc.ServerOption, error) {
	if dir == "" {
		return nil, nil
	}
	f, err := mtls.LoadAs(dir, mtls.RoleExtauth, log)
	if err != nil {
		return nil, err
	}
	return []grpc.ServerOption{grpc.Creds(mtls.ServerCredentials(f, mtls.OnlyRoles("proxy")))}, nil
}
