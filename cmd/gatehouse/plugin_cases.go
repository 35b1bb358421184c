package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/loader/cases"
)

// pluginTestCommand is `gatehouse plugin test`: request cases against a built plugin.
func pluginTestCommand(stdout, _ io.Writer) *cobra.Command {
	var configFile, casesFile, output, symbol string
	timeout := cases.DefaultTimeout
	cmd := &cobra.Command{
		Use:   "test FILE.so --config step.yaml --cases cases.yaml [-o json]",
		Short: "Run request cases against a built plugin and compare its answers",
		Long: "Checks the plugin as `gatehouse plugin verify --config` does, then sends each case's request\n" +
			"to the plugin, loaded in a child process, and compares the answer with the case's want:\n" +
			"decision (allow or deny), status, body, request and response headers present, headers absent.\n" +
			"Every answer is checked as the server checks it before it goes to Envoy. A case whose call\n" +
			"panics, passes --timeout, returns an invalid header or crashes the child fails with the reason.\n" +
			"Exit status 0: every case passed; 1: a case failed or the plugin does not load; 2: bad usage.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "table" && output != "json" {
				return exit(2, fmt.Errorf("plugin test: -o %q: want table or json", output))
			}
			stepSym, config, err := cases.ReadStep(configFile)
			if err != nil {
				return exit(2, fmt.Errorf("plugin test: --config: %w", err))
			}
			if !cmd.Flags().Changed("symbol") && stepSym != "" {
				symbol = stepSym
			}
			cs, err := cases.ReadFile(casesFile)
			if err != nil {
				return exit(2, fmt.Errorf("plugin test: --cases %s: %w", casesFile, err))
			}
			d := (&loader.Checker{}).Check(cmd.Context(), args[0], args[0], symbol, config, true)
			if !d.OK {
				if err := printDiagnosis(stdout, d, output == "json"); err != nil {
					return err
				}
				return exit(1, fmt.Errorf("plugin test: %s does not load; no case was run", args[0]))
			}
			res, err := cases.Run(cmd.Context(), cases.Options{File: args[0], Symbol: symbol, Config: config, Timeout: timeout}, cs)
			if err != nil {
				return exit(1, fmt.Errorf("plugin test: %w", err))
			}
			failed := 0
			for _, r := range res {
				if !r.OK {
					failed++
				}
			}
			if output == "json" {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				err = enc.Encode(map[string]any{"plugin": args[0], "symbol": symbol, "ok": failed == 0, "cases": res})
			} else {
				err = cases.WriteTable(stdout, res)
			}
			if err != nil {
				return err
			}
			if failed > 0 {
				return exit(1, nil)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "YAML file with the pluginAuth step, or just its config object")
	cmd.Flags().StringVar(&casesFile, "cases", "", "YAML file with the request cases")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	cmd.Flags().StringVar(&symbol, "symbol", "Plugin", "exported symbol (default: the step's exportedSymbolName)")
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long each case's Authorize call may take")
	_ = cmd.MarkFlagRequired("config")
	_ = cmd.MarkFlagRequired("cases")
	return cmd
}
