package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/loader/cases"
)

// pluginVerifyCommand is `gatehouse plugin verify`: the pre-flight and trial load the
// server runs before it opens a plugin. Exit 0 when the plugin will load, 1 otherwise.
func pluginVerifyCommand(stdout, _ io.Writer) *cobra.Command {
	var asJSON bool
	var symbol, configFile string
	var timeout = loader.DefaultTrialTimeout
	cmd := &cobra.Command{
		Use:   "verify [--json] FILE.so [--symbol NAME] [--config step.yaml]",
		Short: "Check that a plugin will load into this binary, printing every reason if not",
		Long: "Runs exactly what the server runs before it opens a plugin: the pre-flight comparison with\n" +
			"this binary's build contract, then a trial load in a child process (open, look up the symbol,\n" +
			"check its type, NewConfigInstance). With --config it also decodes the step's config strictly\n" +
			"and calls GetAuthService. --config takes a YAML file holding either one step as it appears\n" +
			"under spec.configs (`pluginAuth: {name, exportedSymbolName, config}`; its symbol is used\n" +
			"unless --symbol is given) or just the config object. Exit status 0: it loads; 1: it does not.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sym := symbol
			var config []byte
			withConfig := configFile != ""
			if withConfig {
				stepSym, cfg, err := cases.ReadStep(configFile)
				if err != nil {
					return exit(2, fmt.Errorf("plugin verify: %w", err))
				}
				config = cfg
				if !cmd.Flags().Changed("symbol") && stepSym != "" {
					sym = stepSym
				}
			}
			ch := loader.Checker{Trial: loader.TrialRunner{Timeout: timeout}}
			d := ch.Check(cmd.Context(), args[0], args[0], sym, config, withConfig)
			if err := printDiagnosis(stdout, d, asJSON); err != nil {
				return err
			}
			if !d.OK {
				return exit(1, nil)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diagnosis as JSON")
	cmd.Flags().StringVar(&symbol, "symbol", "Plugin", "exported symbol the step looks up (exportedSymbolName)")
	cmd.Flags().StringVar(&configFile, "config", "", "YAML file with a pluginAuth step, or just its config object")
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long the trial load may take")
	return cmd
}

func printDiagnosis(w io.Writer, d *loader.Diagnosis, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
	_, err := io.WriteString(w, d.String())
	return err
}
