package v1

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

// shape is what of a node the decoding reads: everything but comments.
type shape struct {
	Kind         yaml.Kind
	Style        yaml.Style
	Tag, Value   string
	Line, Column int
	Content      []shape
}

func shapeOf(n *yaml.Node) shape {
	s := shape{Kind: n.Kind, Style: n.Style, Tag: n.Tag, Value: n.Value, Line: n.Line, Column: n.Column}
	for _, c := range n.Content {
		s.Content = append(s.Content, shapeOf(c))
	}
	return s
}

// v3Documents are yaml.v3's trees of data's documents.
func v3Documents(data []byte) ([]shape, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []shape
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, shapeOf(&doc))
	}
}

// sameAsV3 fails t when fastDocuments takes data and yaml.v3 reads it otherwise. It
// says whether the fast path took it.
func sameAsV3(t *testing.T, data []byte) bool {
	t.Helper()
	fast := fastDocuments(data)
	if fast == nil {
		return false
	}
	want, err := v3Documents(data)
	if err != nil {
		t.Fatalf("the fast path took what yaml.v3 refuses (%v):\n%s", err, data)
	}
	var got []shape
	for _, doc := range fast {
		got = append(got, shapeOf(doc))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the fast path differs from yaml.v3 (-v3 +fast):\n%s\n%s", diff, data)
	}
	return true
}

var fastCases = []struct {
	name string
	yaml string
	fast bool // the fast path takes it
}{
	{"mapping", "a: b\nc: 1\n", true},
	{"leading document marker", "---\na: b\n", true},
	{"comments and blank lines", "# head\n\na: b # line\n  # inside\nc:\n  # before\n  d: e\n\n# foot\n", true},
	{"nested mappings", "a:\n  b:\n    c: d\n  e: f\ng: h\n", true},
	{"sequence of mappings", "a:\n  - b: c\n    d: e\n  - f: g\nh: i\n", true},
	{"sequence at the key's indentation", "a:\n- b\n- c\nd: e\n", true},
	{"sequence in a sequence item's mapping", "a:\n  - b:\n    - c\n    d: e\n", true},
	{"flow collections", "a: [b, c]\nd: {e: f, g: [h, {i: j}]}\nk: []\nl: {}\n", true},
	{"quoted", "a: 'it''s'\nb: \"x y\"\nc: ['p', \"q\"]\n", true},
	{"scalars", "a: 80\nb: -3\nc: 0\nd: true\ne: False\nf: null\ng: ~\nh: 10.1.2.3\ni: 200ms\nj: /x-y\nk: http://h:80/p\nl: a b\nm: yes\n", true},
	{"no newline at the end", "a: b", true},
	{"bench virtual service", "apiVersion: gateway.gatehouse.dev/v1\nkind: VirtualService\nmetadata:\n  name: vs-00007\n  namespace: bench\nspec:\n  virtualHost:\n    domains: [vs-00007.example.com]\n    routes:\n      - matchers: [{prefix: /open-0}]\n        routeAction: {single: {upstream: {name: up-00007, namespace: bench}}}\n", true},

	{"documents", "a: b\n---\nc: d\n# x\n---\n\ne:\n  - f\n", true},
	{"documents after a leading marker", "---\na: b\n---\nc: d", true},
	{"empty document", "---\n---\na: b\n", false},
	{"trailing marker", "a: b\n---\n", false},
	{"marker with content", "a: b\n--- c\n", false},
	{"document end", "a: b\n...\n", false},
	{"empty", "", false},
	{"only comments", "# x\n", false},
	{"null value", "a:\nb: c\n", false},
	{"multi-line plain scalar", "a: b\n  c\n", false},
	{"block scalar", "a: |\n  b\n", false},
	{"anchor and alias", "a: &x b\nc: *x\n", false},
	{"merge", "a: {b: c}\nd:\n  <<: {e: f}\n", false},
	{"tag", "a: !!str 1\n", false},
	{"tab", "a:\tb\n", false},
	{"crlf", "a: b\r\n", false},
	{"non-ascii", "a: é\n", false},
	{"float", "a: 1.5\n", false},
	{"octal-looking", "a: 012\n", false},
	{"timestamp", "a: 2001-12-14\n", false},
	{"escape", "a: \"b\\n\"\n", false},
	{"multi-line flow", "a: [b,\n  c]\n", false},
	{"bad indentation", "a:\n    b: c\n  d: e\n", false},
	{"root sequence", "- a\n", false},
	{"root scalar", "a\n", false},
	{"mapping value in a value", "a: b: c\n", false},
	{"quoted key", "'a': b\n", false},
	{"trailing comma", "a: [b,]\n", false},
	{"syntax error", "a: [b\n", false},
	{"duplicate key", "a: b\na: c\n", true}, // parsed alike; decoding refuses it
}

// TestFastDocumentsAreYAMLv3: what the fast path takes, it parses as yaml.v3 does; what
// it does not take is left to yaml.v3.
func TestFastDocumentsAreYAMLv3(t *testing.T) {
	for _, c := range fastCases {
		t.Run(c.name, func(t *testing.T) {
			if got := sameAsV3(t, []byte(c.yaml)); got != c.fast {
				t.Errorf("fast path took it: %v, want %v", got, c.fast)
			}
		})
	}
}

// TestFastDocumentsOnTheRepositorysYAML: every YAML file of the repository the fast
// path takes parses as with yaml.v3.
func TestFastDocumentsOnTheRepositorysYAML(t *testing.T) {
	taken := eachRepositoryYAML(t, sameAsV3)
	if taken == 0 {
		t.Error("the fast path took none of the repository's YAML files")
	}
	t.Logf("the fast path took %d files", taken)
}

// FuzzFastDocuments: whatever the input, the fast path either declines it or parses it
// as yaml.v3 does.
func FuzzFastDocuments(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c.yaml))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsV3(t, data)
	})
}

// eachRepositoryYAML runs check, as a subtest named by its path, on every .yaml and
// .yml file of the repository (hidden folders left out), and returns how many it
// reported true for.
func eachRepositoryYAML(t *testing.T, check func(t *testing.T, data []byte) bool) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "../.." {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); d.IsDir() || (ext != ".yaml" && ext != ".yml") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		t.Run(path, func(t *testing.T) {
			if check(t, data) {
				n++
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
