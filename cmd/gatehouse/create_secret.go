package main

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

type secretOptions struct {
	name, namespace, resources, output string
	dryRun                             bool
}

func (o *secretOptions) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.name, "name", "", "name of the Secret (required)")
	cmd.Flags().StringVar(&o.namespace, "namespace", "gatehouse-system", "namespace of the Secret")
	cmd.Flags().StringVar(&o.resources, "resources", "", "the control plane's resource folder to write the Secret into")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the Secret, write nothing")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "yaml: also print the Secret")
}

func createCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "create", Short: "Create resources (secrets) for the control plane"}
	secret := &cobra.Command{Use: "secret", Short: "Create an OAuth client Secret or a TLS Secret"}
	secret.AddCommand(createOAuthCommand(stdout, stderr), createTLSCommand(stdout, stderr))
	cmd.AddCommand(secret)
	return cmd
}

func createOAuthCommand(stdout, _ io.Writer) *cobra.Command {
	var o secretOptions
	var clientSecret string
	cmd := &cobra.Command{
		Use:   "oauth --name N [--client-secret S]",
		Short: "Create the Secret an OIDC step's clientSecretRef names",
		Long: "Writes a Secret of type " + apiv1.OAuthSecretType + " (data key " + apiv1.OAuthSecretKey + ") into the\n" +
			"control plane's --resources folder, which it watches. Without --client-secret the secret is read\n" +
			"from standard input, so it stays out of shell history:  gatehouse create secret oauth --name app < file",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			value := clientSecret
			if !cmd.Flags().Changed("client-secret") {
				line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return exit(2, fmt.Errorf("create secret oauth: reading the client secret from stdin: %w", err))
				}
				value = strings.TrimRight(line, "\r\n")
			}
			if value == "" {
				return exit(2, errors.New("create secret oauth: the client secret is empty (give --client-secret or pipe it on stdin)"))
			}
			return writeSecret(stdout, o, apiv1.OAuthSecretType, map[string][]byte{apiv1.OAuthSecretKey: []byte(value)})
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVar(&clientSecret, "client-secret", "", "the OAuth client secret (default: read from stdin)")
	return cmd
}

func createTLSCommand(stdout, _ io.Writer) *cobra.Command {
	var o secretOptions
	var certFile, keyFile string
	cmd := &cobra.Command{
		Use:   "tls --name N --cert FILE --key FILE",
		Short: "Create the TLS Secret a VirtualService's sslConfig names",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cert, err := os.ReadFile(certFile)
			if err != nil {
				return exit(2, fmt.Errorf("create secret tls: --cert: %w", err))
			}
			key, err := os.ReadFile(keyFile)
			if err != nil {
				return exit(2, fmt.Errorf("create secret tls: --key: %w", err))
			}
			if _, err := tls.X509KeyPair(cert, key); err != nil {
				return exit(2, fmt.Errorf("create secret tls: %s and %s are not a certificate and its key: %w", certFile, keyFile, err))
			}
			return writeSecret(stdout, o, apiv1.TLSSecretType, map[string][]byte{"tls.crt": cert, "tls.key": key})
		},
	}
	o.bind(cmd)
	cmd.Flags().StringVar(&certFile, "cert", "", "PEM certificate (chain) file")
	cmd.Flags().StringVar(&keyFile, "key", "", "PEM private key file")
	return cmd
}

// writeSecret prints the Secret (-o yaml or --dry-run; it is the manifest itself, so
// it is not redacted) and, unless --dry-run, writes it into the resource folder.
func writeSecret(stdout io.Writer, o secretOptions, typ string, data map[string][]byte) error {
	if o.name == "" {
		return exit(2, errors.New("create secret: --name is required"))
	}
	if err := apiv1.CheckNames(o.name, o.namespace); err != nil {
		return exit(2, fmt.Errorf("create secret: %w", err))
	}
	if o.output != "" && o.output != "yaml" {
		return exit(2, fmt.Errorf("create secret: -o %q: only yaml", o.output))
	}
	if !o.dryRun && o.resources == "" {
		return exit(2, errors.New("create secret: --resources DIR (the control plane's folder) is required unless --dry-run"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\ntype: %s\ndata:\n",
		apiv1.SecretAPIVersion, apiv1.KindSecret, o.name, o.namespace, typ)
	for _, k := range sortedDataKeys(data) {
		fmt.Fprintf(&b, "  %s: %s\n", k, base64.StdEncoding.EncodeToString(data[k]))
	}
	if o.dryRun || o.output == "yaml" {
		if _, err := io.WriteString(stdout, b.String()); err != nil {
			return err
		}
	}
	if o.dryRun {
		return nil
	}
	path := filepath.Join(o.resources, "secret-"+o.namespace+"-"+o.name+".yaml")
	tmp := filepath.Join(o.resources, ".secret-"+o.namespace+"-"+o.name+".yaml.tmp")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return exit(2, fmt.Errorf("create secret: %w", err))
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return exit(2, fmt.Errorf("create secret: %w", err))
	}
	if o.output == "" {
		fmt.Fprintf(stdout, "Secret %s.%s written to %s\n", o.namespace, o.name, path)
	}
	return nil
}

func sortedDataKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
