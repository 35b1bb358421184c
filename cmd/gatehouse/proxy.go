package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

// proxyCommand is `gatehouse proxy`: what a gateway proxy serves, from the control
// plane (served-config) or from the proxy's admin (the rest).
func proxyCommand(stdout, stderr io.Writer) *cobra.Command {
	var proxyAdmin string
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Inspect a gateway proxy: its served config, config dump, stats, logs and address",
	}
	cmd.PersistentFlags().StringVar(&proxyAdmin, "proxy-admin", cliProxyAdmin(), "the proxy's admin address, Envoy's or `gatehouse gateway --admin-listen` (env GATEHOUSE_PROXY_ADMIN)")
	cmd.AddCommand(servedConfigCommand(stdout))
	var includeEDS bool
	dump := &cobra.Command{
		Use:   "dump",
		Short: "Print the proxy's config dump (POST /config_dump; secrets redacted)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := "/config_dump"
			if includeEDS {
				path += "?include_eds"
			}
			return proxyGet(cmd.Context(), stdout, http.MethodPost, proxyAdmin, path)
		},
	}
	dump.Flags().BoolVar(&includeEDS, "include-eds", false, "add the endpoints")
	stats := &cobra.Command{
		Use:   "stats",
		Short: "Print the proxy's stats (GET /stats)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return proxyGet(cmd.Context(), stdout, http.MethodGet, proxyAdmin, "/stats")
		},
	}
	var follow bool
	logs := &cobra.Command{
		Use:   "logs [-f]",
		Short: "Print the proxy's recent logs; -f switches it to debug and follows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !follow {
				return proxyGet(cmd.Context(), stdout, http.MethodGet, proxyAdmin, "/logs")
			}
			if err := proxyGet(cmd.Context(), io.Discard, http.MethodPost, proxyAdmin, "/logging?level=debug"); err != nil {
				return err
			}
			fmt.Fprintln(stderr, "proxy log level set to debug; following (Ctrl-C to stop)")
			err := proxyGet(cmd.Context(), stdout, http.MethodGet, proxyAdmin, "/logs?follow=true")
			if cmd.Context().Err() != nil {
				return nil
			}
			return err
		},
	}
	logs.Flags().BoolVarP(&follow, "follow", "f", false, "switch the proxy to debug and follow its logs")
	address := func(url bool) *cobra.Command {
		use, short := "address", "Print the address of the proxy's HTTP listener"
		if url {
			use, short = "url", "Print the URL of the proxy's HTTP listener"
		}
		return &cobra.Command{
			Use: use, Short: short, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				var b strings.Builder
				if err := proxyGet(cmd.Context(), &b, http.MethodGet, proxyAdmin, "/listeners"); err != nil {
					return err
				}
				for _, l := range strings.Split(b.String(), "\n") {
					if name, addr, ok := strings.Cut(l, "::"); ok && name == "http" {
						if url {
							addr = "http://" + addr
						}
						_, err := fmt.Fprintln(stdout, addr)
						return err
					}
				}
				return exit(1, errors.New("proxy: the proxy serves no http listener"))
			},
		}
	}
	cmd.AddCommand(dump, stats, logs, address(false), address(true))
	return cmd
}

func servedConfigCommand(stdout io.Writer) *cobra.Command {
	var (
		where        targetFlags
		role, output string
	)
	cmd := &cobra.Command{
		Use:   "served-config",
		Short: "Print what the control plane serves to a proxy role (works while the proxy is down)",
		Long: "Reads /snapshots/xds?role=ROLE from the control plane's admin: every listener, route\n" +
			"configuration, cluster, endpoint set and secret (redacted) the role is served, by type and name.\n" +
			"A VirtualService missing here was rejected: `gatehouse check` says why. In Kubernetes the\n" +
			"admin is reached through the API server's proxy to the Service controlplane of --namespace.\n" + targetHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "yaml" && output != "json" {
				return exit(2, fmt.Errorf("proxy served-config: -o %q: use yaml or json", output))
			}
			t, err := where.resolve(cmd, "proxy served-config")
			if err != nil {
				return exit(2, err)
			}
			var data map[string]any
			if _, err := t.fetch(cmd.Context(), "/snapshots/xds?role="+url.QueryEscape(role), &data); err != nil {
				return exit(2, fmt.Errorf("proxy served-config: %w", err))
			}
			return writeData(stdout, output, data[role])
		},
	}
	addTargetFlags(cmd, false, &where)
	cmd.Flags().StringVar(&role, "role", xds.DefaultProxyRole, "the proxy role, <namespace>~<proxy name>")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "yaml or json")
	return cmd
}

// proxyGet sends method path to the proxy admin and copies the answer to w, line by
// line so a followed answer shows as it comes.
func proxyGet(ctx context.Context, w io.Writer, method, addr, path string) error {
	if !strings.Contains(path, "follow=true") {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, nil)
	if err != nil {
		return exit(2, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return exit(2, fmt.Errorf("proxy: is the proxy admin on %s? %w", addr, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return exit(1, fmt.Errorf("proxy: %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b))))
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}
