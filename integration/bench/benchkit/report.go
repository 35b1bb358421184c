package benchkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Section is a generated part of BENCHMARKS.md: the text between
// <!-- bench:NAME:start --> and <!-- bench:NAME:end -->, so that text written by hand
// can live around it.
type Section struct {
	Name    string // "plugin", "oidc", …
	Heading string // introduces the section when its markers are not there yet
}

func (s Section) start() string { return "<!-- bench:" + s.Name + ":start -->" }
func (s Section) end() string   { return "<!-- bench:" + s.Name + ":end -->" }

// Replace returns doc with text between the markers of s.
func (s Section) Replace(doc, text string) (string, error) {
	start, end := s.start(), s.end()
	block := start + "\n" + strings.TrimRight(text, "\n") + "\n" + end
	ns, ne := strings.Count(doc, start), strings.Count(doc, end)
	switch {
	case ns == 0 && ne == 0:
		if doc == "" {
			doc = "# Benchmarks\n"
		}
		return strings.TrimRight(doc, "\n") + "\n\n" + s.Heading + block + "\n", nil
	case ns != 1 || ne != 1:
		return "", fmt.Errorf("want one %s and one %s, found %d and %d: fix the file by hand", start, end, ns, ne)
	}
	i, j := strings.Index(doc, start), strings.Index(doc, end)
	if j < i {
		return "", fmt.Errorf("%s comes before %s: fix the file by hand", end, start)
	}
	return doc[:i] + block + doc[j+len(end):], nil
}

// Result is what one section of a run found: its goals with when and how they were
// measured, which the goal table is built from, and its generated text.
type Result struct {
	Section string
	Date    string
	Command string
	Goals   []Goal
	// Text is the section's block in BENCHMARKS.md as written, kept so that the file
	// can be rebuilt from the stored results without measuring.
	Text     string `json:",omitempty"`
	Markdown string `json:"-"` // everything the section wrote, folded parts included
	Profile  string `json:"-"` // a profile's summary, printed after the section
}

// SaveResult writes r to dir/SECTION.json, replacing the section's last result.
func SaveResult(dir string, r Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, r.Section+".json"), append(b, '\n'), 0o644)
}

// LoadResults reads the stored result of each of sections that has one, in that order.
func LoadResults(dir string, sections []string) ([]Result, error) {
	var out []Result
	for _, name := range sections {
		b, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s.json: %w", name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// GoalTable is the table BENCHMARKS.md opens with: every goal of rs, its target, the
// latest figure and verdict, and the date and command of the run that measured it
// (given on a section's first row).
func GoalTable(rs []Result) string {
	var b strings.Builder
	b.WriteString("| section | goal | target | latest | verdict | date | command |\n|---|---|---:|---:|---|---|---|\n")
	for _, r := range rs {
		for i, g := range r.Goals {
			cmd := "〃"
			if i == 0 {
				cmd = "`" + r.Command + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Section, g.What, g.TargetText(),
				g.Format(g.Median()), strings.SplitN(g.Verdict(), ":", 2)[0], r.Date, cmd)
		}
	}
	return b.String()
}

// Fold writes text folded under title: the section's block in BENCHMARKS.md links to
// it, and results/NAME.md holds it (see SplitDetails).
func Fold(b *strings.Builder, title, text string) {
	fmt.Fprintf(b, "<details><summary>%s</summary>\n\n%s\n\n</details>\n\n", title, strings.TrimRight(text, "\n"))
}

// SplitDetails moves the folded tables (<details>…</details>) out of a section's text:
// it returns the text without them, its first paragraph ending with a link to where
// they go, and them.
func SplitDetails(md, link string) (short, details string) {
	var s, d strings.Builder
	for {
		i := strings.Index(md, "<details>")
		j := strings.Index(md, "</details>")
		if i < 0 || j < i {
			break
		}
		s.WriteString(md[:i])
		d.WriteString(md[i:j+len("</details>")] + "\n\n")
		md = strings.TrimLeft(md[j+len("</details>"):], "\n")
	}
	s.WriteString(md)
	if d.Len() == 0 {
		return s.String(), ""
	}
	first, rest, _ := strings.Cut(strings.TrimRight(s.String(), "\n"), "\n\n")
	if rest != "" {
		rest = "\n\n" + rest
	}
	return first + " Every run, round and sample: [" + link + "](" + link + ")." + rest + "\n", d.String()
}
