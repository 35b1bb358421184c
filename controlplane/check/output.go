package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText prints one line per check ("Checking Upstreams... OK" or "N Errors!"
// followed by each error), then "No problems detected." or the error count.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "Checking %s... ", c.Title)
		switch c.Status {
		case "skipped":
			fmt.Fprintf(&b, "Skipped (%s)\n", c.Why)
		case "errors":
			fmt.Fprintf(&b, "%d Errors!\n", len(c.Errors))
		default:
			b.WriteString("OK\n")
		}
		for _, e := range c.Errors {
			b.WriteString("  " + e + "\n")
		}
		for _, wn := range c.Warnings {
			b.WriteString("  warning: " + wn + "\n")
		}
	}
	if r.Healthy {
		b.WriteString("No problems detected.\n")
	} else {
		fmt.Fprintf(&b, "%d Errors found!\n", r.Errors)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
