package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

func statusCommand(stdout, _ io.Writer) *cobra.Command {
	var admin string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the status of every AuthConfig a running extauth server knows (exit 1 if any is rejected)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			statuses, err := fetchStatuses(admin)
			if err != nil {
				return exit(2, err)
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "AUTHCONFIG\tSTATE\tSERVING\tREASON")
			rejected, configs, source := 0, 0, false
			for _, s := range statuses {
				serving := "yes"
				if server.IsSource(s) {
					source = true
				} else {
					configs++
				}
				if s.State == server.StateRejected {
					if !server.IsSource(s) {
						rejected++
					}
					serving = "no"
					if s.ServingPrevious {
						serving = "previous version"
					}
				}
				// A reason of several lines (one per bad document) would break the table.
				reason := strings.ReplaceAll(strings.TrimSpace(s.Reason+stuckNote(s.Stuck)), "\n", "; ")
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.State, serving, reason)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			switch {
			case source && rejected > 0:
				return exit(1, fmt.Errorf("the config source cannot be applied, and %d of %d auth configs rejected", rejected, configs))
			case source:
				return exit(1, errors.New("the config source cannot be applied; every auth config serves its last good version"))
			case rejected > 0:
				return exit(1, fmt.Errorf("%d of %d auth configs rejected", rejected, configs))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&admin, "admin", defaultAdminListen, "the extauth admin address (START_STATS_SERVER=true or --admin-listen)")
	// --admin-address is the deprecated spelling of --admin, which every other verb uses;
	// scripts that pass it keep working.
	cmd.Flags().StringVar(&admin, "admin-address", defaultAdminListen, "")
	_ = cmd.Flags().MarkDeprecated("admin-address", "use --admin")
	return cmd
}

func fetchStatuses(admin string) ([]server.Status, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + admin + "/auth-configs")
	if err != nil {
		return nil, fmt.Errorf("status: is the extauth admin server on %s? %w", admin, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status: %s/auth-configs answered %s", admin, resp.Status)
	}
	var out []server.Status
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("status: decoding the answer: %w", err)
	}
	return out, nil
}

// stuckNote says which steps have calls that passed their deadline and still run.
func stuckNote(stuck []chain.StuckStep) string {
	var b strings.Builder
	for _, st := range stuck {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s stuck: %d calls still run past their deadline", st.Step, st.Calls)
		if st.Plugin != "" {
			fmt.Fprintf(&b, " (plugin %s)", st.Plugin)
		}
	}
	return b.String()
}
