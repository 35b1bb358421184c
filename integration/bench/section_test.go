package main

import (
	"strings"
	"testing"
)

func TestReplaceSection(t *testing.T) {
	const text = "figures\n"
	for _, tc := range []struct {
		name, doc, want string
		wantErr         bool
	}{
		{
			name: "new file",
			want: "# Benchmarks\n\n" + sectionHeading + startMarker + "\nfigures\n" + endMarker + "\n",
		},
		{
			name: "file without the section keeps what it has",
			doc:  "# Benchmarks\n\n## OIDC\n\nlogin: 3 ms\n",
			want: "# Benchmarks\n\n## OIDC\n\nlogin: 3 ms\n\n" + sectionHeading + startMarker + "\nfigures\n" + endMarker + "\n",
		},
		{
			name: "old figures replaced, neighbours kept",
			doc:  "# B\n\n## Plugin\n\n" + startMarker + "\nold\nlines\n" + endMarker + "\n\nanalysis\n\n## OIDC\n\nx\n",
			want: "# B\n\n## Plugin\n\n" + startMarker + "\nfigures\n" + endMarker + "\n\nanalysis\n\n## OIDC\n\nx\n",
		},
		{name: "start only", doc: startMarker + "\nold\n", wantErr: true},
		{name: "two starts", doc: startMarker + startMarker + endMarker, wantErr: true},
		{name: "end before start", doc: endMarker + "\n" + startMarker + "\n", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := replaceSection(tc.doc, text)
			if (err != nil) != tc.wantErr {
				t.Fatalf("replaceSection() error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("replaceSection() =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestReplaceSectionIsStable(t *testing.T) {
	doc, err := replaceSection("# Benchmarks\n\nintro\n", "one\n")
	if err != nil {
		t.Fatal(err)
	}
	again, err := replaceSection(doc, "two\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(doc, "\none\n", "\ntwo\n", 1); again != want {
		t.Errorf("second update =\n%s\nwant\n%s", again, want)
	}
}
