package cases

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// ReadFile reads a cases file: YAML (or JSON), as Parse takes it.
func ReadFile(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("the cases cannot be expressed as JSON: %w", err)
	}
	return Parse(j)
}

// WriteTable writes results as `gatehouse plugin test` prints them: a table of every
// case, then each failed case's problems, then how many passed.
func WriteTable(w io.Writer, res []Result) error {
	failed := 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tWANT\tGOT\tTIME\tRESULT")
	for _, r := range res {
		mark := "ok"
		if !r.OK {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Want, r.Got, r.Duration.Round(10*time.Microsecond), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range res {
		for _, p := range r.Problems {
			// A crash's reason carries what the plugin printed, over several lines.
			fmt.Fprintf(&b, "%s: %s\n", r.Name, strings.ReplaceAll(p, "\n", "\n    "))
		}
	}
	fmt.Fprintf(&b, "%d of %d cases passed\n", len(res)-failed, len(res))
	_, err := io.WriteString(w, b.String())
	return err
}
