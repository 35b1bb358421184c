package translate_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/examples"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden.json files from the current translation")

// goldenOutput is what a golden file holds: the ExtAuthConfig translation of one
// resource set (the Envoy translation has its golden files in controlplane/pipeline,
// with the statuses that decide what is translated).
type goldenOutput struct {
	ExtAuthConfigs []goldenExtAuth `json:"extAuthConfigs"`
}

type goldenExtAuth struct {
	ID     string          `json:"id"`
	Config json.RawMessage `json:"config,omitempty"`
	Error  []string        `json:"error,omitempty"` // one line per joined error
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
		t.Fatalf("protojson output: %v", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func translateGolden(t *testing.T, set *apiv1.Set) []byte {
	t.Helper()
	out := goldenOutput{ExtAuthConfigs: []goldenExtAuth{}}
	for _, r := range translate.ExtAuth(set) {
		g := goldenExtAuth{ID: r.ID}
		if r.Err != nil {
			g.Error = strings.Split(r.Err.Error(), "\n")
		} else {
			g.Config = stableJSON(t, r.Config)
		}
		out.ExtAuthConfigs = append(out.ExtAuthConfigs, g)
	}
	b, err := json.MarshalIndent(out, "", "  ")
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
		t.Errorf("translation differs from %s (-want +got; run go test -update if the change is intended):\n%s",
			path, cmp.Diff(string(want), string(got)))
	}
}

// TestGolden translates each testdata/<case>.yaml and compares the result with
// testdata/<case>.golden.json.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no testdata/*.yaml cases")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		t.Run(name, func(t *testing.T) {
			set, err := apiv1.Load(in)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			checkGolden(t, strings.TrimSuffix(in, ".yaml")+".golden.json", translateGolden(t, set))
		})
	}
}

// TestGoldenExamples translates the embedded examples `gatehouse dev` serves.
func TestGoldenExamples(t *testing.T) {
	set, err := examples.Default()
	if err != nil {
		t.Fatalf("examples.Default: %v", err)
	}
	out := translateGolden(t, set)
	checkGolden(t, filepath.Join("testdata", "examples_default.golden.json"), out)
	var g goldenOutput
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatal(err)
	}
	for _, ac := range g.ExtAuthConfigs {
		if ac.Error != nil {
			t.Errorf("example AuthConfig %s rejected: %v", ac.ID, ac.Error)
		}
	}
}
