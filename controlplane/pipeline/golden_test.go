package pipeline_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current stages")

// golden is what a golden file holds: every stage after the input.
type golden struct {
	Problems []string                                         `json:"problems,omitempty"`
	Statuses []goldenStatus                                   `json:"statuses"`
	Proxies  []*translate.Proxy                               `json:"proxies"`
	XDS      map[string]map[string]map[string]json.RawMessage `json:"xds"`
}

type goldenStatus struct {
	Resource string            `json:"resource"`
	Serving  string            `json:"serving"` // this, last or none
	Statuses []validate.Status `json:"statuses"`
}

// decodeFile reads one YAML file as an Input, as the directory source would.
func decodeFile(t *testing.T, path string) *source.Input {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, probs := source.Decode(data, filepath.Base(path))
	if len(probs) > 0 {
		t.Fatalf("%s: %v", path, probs)
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].Key().Less(res[j].Key()) })
	var kept []source.Resource
	var problems []source.Problem
	// A key defined twice keeps its first definition, as the directory source does.
	for i, r := range res {
		if i > 0 && r.Key() == res[i-1].Key() {
			problems = append(problems, source.Problem{Origin: r.Origin, Message: r.Key().String() + " is defined twice; the first definition is used"})
			continue
		}
		kept = append(kept, r)
	}
	return source.NewInput("test", kept, problems)
}

// stableJSON is protojson of m, re-encoded so the golden files do not depend on
// protojson's deliberately unstable whitespace.
func stableJSON(t *testing.T, m proto.Message) json.RawMessage {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatalf("protojson: %v", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func render(t *testing.T, st pipeline.Stages) []byte {
	t.Helper()
	g := golden{Proxies: st.Proxies, XDS: map[string]map[string]map[string]json.RawMessage{}}
	for _, p := range st.Edge.Problems {
		g.Problems = append(g.Problems, p.String())
	}
	for _, r := range st.Edge.Resources.All() {
		serving := "none"
		switch r.Serving {
		case r.Hash:
			serving = "this"
		case "":
		default:
			serving = "last"
		}
		g.Statuses = append(g.Statuses, goldenStatus{Resource: r.Key().String(), Serving: serving, Statuses: r.Statuses})
	}
	for role, res := range st.XDS {
		if err := pipelinetest.Valid(res); err != nil {
			t.Errorf("role %s: %v", role, err)
		}
		g.XDS[role] = map[string]map[string]json.RawMessage{}
		for typeURL, byName := range res {
			short := typeURL[strings.LastIndex(typeURL, ".")+1:]
			g.XDS[role][short] = map[string]json.RawMessage{}
			for name, m := range byName {
				full, err := xds.Expand(m) // compact virtual hosts, decoded
				if err != nil {
					t.Fatal(err)
				}
				if !sameBytes(t, m, full) {
					t.Errorf("%s %s %s: served as other bytes than its full message's", role, short, name)
				}
				g.XDS[role][short][name] = stableJSON(t, full)
			}
		}
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("stages differ from %s (-want +got; run go test -update if the change is intended):\n%s", path, cmp.Diff(string(want), string(got)))
	}
}

// TestGolden runs each testdata/<case>.yaml through the pipeline and compares the
// statuses, the proxies and the xds resources with testdata/<case>.golden.json. Every
// generated resource is also checked valid (ValidateAll, every Any, consistency).
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no testdata/*.yaml cases")
	}
	for _, in := range inputs {
		t.Run(strings.TrimSuffix(filepath.Base(in), ".yaml"), func(t *testing.T) {
			// The real xDS server checks what it is handed too: nothing may be refused.
			srv := xds.NewServer(xds.Options{Log: zerolog.Nop()})
			p := pipeline.New(pipeline.Options{Publish: srv.Publish})
			p.Apply(decodeFile(t, in))
			for role, err := range p.Stages().PublishErrors {
				t.Errorf("xds.Server.Publish(%s): %s", role, err)
			}
			checkGolden(t, strings.TrimSuffix(in, ".yaml")+".golden.json", render(t, p.Stages()))
		})
	}
}

// sameBytes says whether a and b serialize (deterministically, as served) the same.
func sameBytes(t *testing.T, a, b proto.Message) bool {
	t.Helper()
	opts := proto.MarshalOptions{Deterministic: true}
	ab, err := opts.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := opts.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ab, bb)
}
