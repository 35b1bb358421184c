package envoysds

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// Files are the SDS files of the certificate folder tlsDir, by file name: each a
// DiscoveryResponse in YAML holding one Secret of Secrets, as Envoy reads a
// path_config_source. Every Secret passes ValidateAll.
func Files(tlsDir string) (map[string][]byte, error) {
	if err := CheckDir(tlsDir); err != nil {
		return nil, fmt.Errorf("envoysds: certificate folder: %w", err)
	}
	cert, validation := Secrets(tlsDir)
	out := map[string][]byte{}
	for file, s := range map[string]*tlsv3.Secret{CertificateFile: cert, ValidationFile: validation} {
		if err := s.ValidateAll(); err != nil {
			return nil, fmt.Errorf("envoysds: %s: %w", file, err)
		}
		a, err := anypb.New(s)
		if err != nil {
			return nil, err
		}
		j, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(&discoveryv3.DiscoveryResponse{Resources: []*anypb.Any{a}})
		if err != nil {
			return nil, err
		}
		if out[file], err = yaml.JSONToYAML(j); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Write writes the SDS files of the certificate folder tlsDir into sdsDir (made when
// missing), each written aside and renamed into place.
func Write(tlsDir, sdsDir string) error {
	files, err := Files(tlsDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(sdsDir, 0o755); err != nil {
		return fmt.Errorf("envoysds: %w", err)
	}
	for name, data := range files {
		p := filepath.Join(sdsDir, name)
		if err := os.WriteFile(p+".new", data, 0o644); err != nil {
			return fmt.Errorf("envoysds: %w", err)
		}
		if err := os.Rename(p+".new", p); err != nil {
			return fmt.Errorf("envoysds: %w", err)
		}
	}
	return nil
}

// ReadSecret reads the Secret an SDS reference names from the file of its
// path_config_source, as Envoy would: the file must be a DiscoveryResponse holding that
// Secret, which must pass ValidateAll.
func ReadSecret(c *tlsv3.SdsSecretConfig) (*tlsv3.Secret, error) {
	src := c.GetSdsConfig().GetPathConfigSource()
	if src == nil {
		return nil, errors.New("only a path_config_source (SDS from a file) is supported")
	}
	data, err := os.ReadFile(src.GetPath())
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.GetPath(), err)
	}
	var resp discoveryv3.DiscoveryResponse
	if err := protojson.Unmarshal(j, &resp); err != nil {
		return nil, fmt.Errorf("%s: not a DiscoveryResponse: %w", src.GetPath(), err)
	}
	for _, a := range resp.GetResources() {
		if a.GetTypeUrl() != SecretType {
			return nil, fmt.Errorf("%s: holds a %s, not a Secret", src.GetPath(), a.GetTypeUrl())
		}
		var s tlsv3.Secret
		if err := a.UnmarshalTo(&s); err != nil {
			return nil, fmt.Errorf("%s: %w", src.GetPath(), err)
		}
		if s.GetName() != c.GetName() {
			continue
		}
		if err := s.ValidateAll(); err != nil {
			return nil, fmt.Errorf("%s: secret %s: %w", src.GetPath(), s.GetName(), err)
		}
		return &s, nil
	}
	return nil, fmt.Errorf("%s holds no secret %q", src.GetPath(), c.GetName())
}

// Folder is the certificate folder whose files the Secrets cert (a TLS certificate) and
// validation (a trusted CA) name. They must be what Secrets makes of one folder, names
// aside: mtls.CertFile, mtls.KeyFile and mtls.CAFile of an absolute folder, watched, and
// nothing else, which is what mtls.Load reads.
func Folder(cert, validation *tlsv3.Secret) (string, error) {
	dir := path.Dir(cert.GetTlsCertificate().GetCertificateChain().GetFilename())
	if CheckDir(dir) == nil {
		wantC, wantV := Secrets(dir)
		wantC.Name, wantV.Name = cert.GetName(), validation.GetName()
		if proto.Equal(cert, wantC) && proto.Equal(validation, wantV) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("secrets %s and %s: want a tls_certificate and a validation_context naming the files %s, %s and %s of one folder "+
		"and that folder as watched_directory, nothing else (as gatehouse envoy sds writes them)",
		cert.GetName(), validation.GetName(), mtls.CertFile, mtls.KeyFile, mtls.CAFile)
}
