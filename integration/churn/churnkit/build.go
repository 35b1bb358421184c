package churnkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// swapPluginModule is the source of SwapPlugin (the plugin-load section's plugin: it
// allows, and says which build answered).
const swapPluginModule = "integration/bench/testdata/loadplugin"

// Build builds into dir what a run needs besides the gatehouse binary it is given: the
// upstream, required_header.so, and two builds of SwapPlugin that differ only in their
// Build constant, made with `gatehouse plugin build` as a plugin author would.
func Build(ctx context.Context, root, gatehouse, dir string) (Bins, error) {
	b := Bins{Gatehouse: gatehouse, Upstream: filepath.Join(dir, "upstream"), RequiredHeader: filepath.Join(dir, "required_header.so")}
	for _, args := range [][]string{
		{"build", "-o", b.Upstream, "./integration/churn/upstream"},
		{"build", "-buildmode=plugin", "-o", b.RequiredHeader, "./plugins/required_header"},
	} {
		if _, err := benchkit.Output(ctx, root, "go", args...); err != nil {
			return Bins{}, err
		}
	}
	src := filepath.Join(root, swapPluginModule)
	code, err := os.ReadFile(filepath.Join(src, SwapPlugin+".go"))
	if err != nil {
		return Bins{}, err
	}
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return Bins{}, err
	}
	const constant = `const Build = "dev"`
	if !strings.Contains(string(code), constant) {
		return Bins{}, fmt.Errorf("%s: no %s to replace", swapPluginModule, constant)
	}
	for v := 1; v <= 2; v++ {
		mod := filepath.Join(dir, "swap-src", strconv.Itoa(v))
		out := filepath.Join(dir, "swap-out", strconv.Itoa(v))
		if err := os.MkdirAll(mod, 0o755); err != nil {
			return Bins{}, err
		}
		versioned := strings.Replace(string(code), constant, fmt.Sprintf(`const Build = "churn-%d"`, v), 1)
		if err := os.WriteFile(filepath.Join(mod, SwapPlugin+".go"), []byte(versioned), 0o644); err != nil {
			return Bins{}, err
		}
		if err := os.WriteFile(filepath.Join(mod, "go.mod"), gomod, 0o644); err != nil {
			return Bins{}, err
		}
		if _, err := benchkit.Output(ctx, "", gatehouse, "plugin", "build", "--quiet", "--module", mod, "--out", out, "--gatehouse-src", root); err != nil {
			return Bins{}, err
		}
		b.SwapVersions = append(b.SwapVersions, filepath.Join(out, SwapPlugin+".so"))
	}
	return b, nil
}
