package benchkit

import (
	"strings"
	"testing"
)

func TestSectionReplace(t *testing.T) {
	const text = "figures\n"
	s := Section{Name: "plugin", Heading: "## Plugin\n\n"}
	start, end := s.start(), s.end()
	other := Section{Name: "oidc"}
	for _, tc := range []struct {
		name, doc, want string
		wantErr         bool
	}{
		{
			name: "new file",
			want: "# Benchmarks\n\n" + s.Heading + start + "\nfigures\n" + end + "\n",
		},
		{
			name: "file without the section keeps what it has",
			doc:  "# Benchmarks\n\n## OIDC\n\nlogin: 3 ms\n",
			want: "# Benchmarks\n\n## OIDC\n\nlogin: 3 ms\n\n" + s.Heading + start + "\nfigures\n" + end + "\n",
		},
		{
			name: "old figures replaced, neighbours kept",
			doc:  "# B\n\n## Plugin\n\n" + start + "\nold\nlines\n" + end + "\n\nanalysis\n\n## OIDC\n\nx\n",
			want: "# B\n\n## Plugin\n\n" + start + "\nfigures\n" + end + "\n\nanalysis\n\n## OIDC\n\nx\n",
		},
		{
			name: "another section's markers are left alone",
			doc:  start + "\nold\n" + end + "\n" + other.start() + "\nkept\n" + other.end() + "\n",
			want: start + "\nfigures\n" + end + "\n" + other.start() + "\nkept\n" + other.end() + "\n",
		},
		{name: "start only", doc: start + "\nold\n", wantErr: true},
		{name: "two starts", doc: start + start + end, wantErr: true},
		{name: "end before start", doc: end + "\n" + start + "\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Replace(tc.doc, text)
			if (err != nil) != tc.wantErr {
				t.Fatalf("replace() error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("replace() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestSectionReplaceIsStable(t *testing.T) {
	doc, err := Section{Name: "oidc"}.Replace("# Benchmarks\n\nintro\n", "one\n")
	if err != nil {
		t.Fatal(err)
	}
	again, err := Section{Name: "oidc"}.Replace(doc, "two\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(doc, "\none\n", "\ntwo\n", 1); again != want {
		t.Errorf("second update =\n%s\nwant\n%s", again, want)
	}
}

func TestSplitDetails(t *testing.T) {
	md := "Measured.\n\n| a |\n\n<details><summary>Every run</summary>\n\n| 1 |\n\n</details>\n\ntext\n\n<details><summary>Every start</summary>\n\n| 2 |\n</details>\n"
	short, details := SplitDetails(md, "r/x.md")
	if want := "Measured. Every run, round and sample: [r/x.md](r/x.md).\n\n| a |\n\ntext\n"; short != want {
		t.Errorf("short =\n%q\nwant\n%q", short, want)
	}
	if want := "<details><summary>Every run</summary>\n\n| 1 |\n\n</details>\n\n<details><summary>Every start</summary>\n\n| 2 |\n</details>\n\n"; details != want {
		t.Errorf("details =\n%q\nwant\n%q", details, want)
	}
	if short, details := SplitDetails("| a |\n", "r/x.md"); short != "| a |\n" || details != "" {
		t.Errorf("without folded tables: %q, %q", short, details)
	}
}

func TestCommandLineLeavesOutWhereOutputGoes(t *testing.T) {
	got := commandLine([]string{"-write", "-file", "/tmp/B.md", "-only", "devloop", "--results=/tmp/r", "-devloop-rounds", "10"})
	if want := "go run ./integration/bench -write -only devloop -devloop-rounds 10"; got != want {
		t.Errorf("commandLine() = %q, want %q", got, want)
	}
}
