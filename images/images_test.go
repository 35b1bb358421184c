// Package images_test checks that the Dockerfiles agree with each other, with the Go code
// that assembles the plugin image, and with the gatehouse version. No Docker engine runs
// where the tests run, so the Dockerfiles themselves are not built here.
package images_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"helm.sh/helm/v3/pkg/chart/loader"

	"gatehouse.dev/gatehouse/build/image"
	"gatehouse.dev/gatehouse/internal/version"
)

var dockerfiles = []string{"extauth/Dockerfile", "gatehouse/Dockerfile", "plugin/Dockerfile", "plugin-builder/Dockerfile"}

// instruction returns the arguments of every line of the Dockerfile at path that starts
// with keyword (continuation lines are not joined; the checked instructions fit on one).
func instruction(t *testing.T, path, keyword string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, keyword+" "); ok {
			args = append(args, strings.TrimSpace(rest))
		}
	}
	return args
}

func TestDockerfilePins(t *testing.T) {
	goVersion := regexp.MustCompile(`^GO_VERSION=1\.\d+\.\d+$`)
	var first string
	for _, path := range dockerfiles {
		t.Run(path, func(t *testing.T) {
			args := instruction(t, path, "ARG")
			var gotGo string
			for _, a := range args {
				if goVersion.MatchString(a) {
					gotGo = a
				}
			}
			if gotGo == "" {
				t.Fatalf("no ARG GO_VERSION with a full patch version (plugins need the exact Go release) in %q", args)
			}
			if first == "" {
				first = gotGo
			} else if gotGo != first {
				t.Errorf("ARG %s, other Dockerfiles have %s; every image must use one Go release", gotGo, first)
			}
			if want := "GATEHOUSE_VERSION=" + version.Version; !slices.Contains(args, want) {
				t.Errorf("no ARG %s (internal/version.Version) in %q", want, args)
			}
			for _, from := range instruction(t, path, "FROM") {
				if strings.HasPrefix(from, "golang:") && !strings.HasPrefix(from, "golang:${GO_VERSION}-bookworm") {
					t.Errorf("FROM %s: use golang:${GO_VERSION}-bookworm", from)
				}
			}
		})
	}
}

func TestDockerfileContents(t *testing.T) {
	tests := []struct {
		path string
		want []string
	}{
		{"extauth/Dockerfile", []string{
			"RUN CGO_ENABLED=1 go build -trimpath",
			"FROM debian:bookworm-slim",
			"EXPOSE 8083",
			"mkdir /auth-plugins",
			`ENTRYPOINT ["/usr/local/bin/gatehouse"]`,
			`CMD ["extauth", "--plugin-dir", "/auth-plugins", "--listen", ":8083"]`,
		}},
		{"gatehouse/Dockerfile", []string{
			"RUN CGO_ENABLED=1 go build -trimpath",
			"FROM debian:bookworm-slim",
			"USER 65532:65532",
			"EXPOSE 9977 9091",
			`ENTRYPOINT ["/usr/local/bin/gatehouse"]`,
			`CMD ["controlplane", "--kube", "--xds-listen", ":9977", "--admin-listen", ":9091"]`,
		}},
		{"plugin-builder/Dockerfile", []string{
			"RUN CGO_ENABLED=1 go build -trimpath",
			"COPY --from=build /out/gatehouse /usr/local/bin/gatehouse",
			`CMD ["plugin", "build", "--module", "/src", "--out", "/out"]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			b, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s does not contain %q", tt.path, w)
				}
			}
		})
	}
}

// TestPluginDockerfileMatchesLayout keeps the Docker-built plugin image and the one
// `gatehouse plugin image` writes interchangeable.
func TestPluginDockerfileMatchesLayout(t *testing.T) {
	entrypoints := instruction(t, "plugin/Dockerfile", "ENTRYPOINT")
	if len(entrypoints) != 1 {
		t.Fatalf("ENTRYPOINT lines = %q, want one", entrypoints)
	}
	var got []string
	if err := json.Unmarshal([]byte(entrypoints[0]), &got); err != nil {
		t.Fatalf("ENTRYPOINT %s: not exec form: %v", entrypoints[0], err)
	}
	if diff := cmp.Diff(image.Entrypoint, got); diff != "" {
		t.Errorf("ENTRYPOINT (-build/image +Dockerfile):\n%s", diff)
	}
	if diff := cmp.Diff([]string{image.User}, instruction(t, "plugin/Dockerfile", "USER")); diff != "" {
		t.Errorf("USER (-build/image +Dockerfile):\n%s", diff)
	}
	b, err := os.ReadFile("plugin/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"LABEL " + image.LabelVersion + "=${GATEHOUSE_VERSION}",
		"COPY --from=build /out/gatehouse-plugin-copier " + image.CopierPath,
		"*.so " + image.PluginDir + "/",
		"CGO_ENABLED=0 go build -trimpath -o /out/gatehouse-plugin-copier ./images/copier",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plugin/Dockerfile does not contain %q", want)
		}
	}
}

// TestEveryChartImageHasADockerfile: each gatehouse/<name> image the chart's values name
// is built by images/<name>/Dockerfile (the control plane's gatehouse/gatehouse had none).
func TestEveryChartImageHasADockerfile(t *testing.T) {
	chrt, err := loader.Load("../deploy/helm/gatehouse")
	if err != nil {
		t.Fatal(err)
	}
	var repos []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["repository"].(string); ok {
				repos = append(repos, r)
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(chrt.Values)
	ours := 0
	for _, r := range repos {
		name, ok := strings.CutPrefix(r, "gatehouse/")
		if !ok {
			continue // Envoy, Redis: their own projects' images
		}
		ours++
		path := name + "/Dockerfile"
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("the chart runs image %s, but images/%s does not build it: %v", r, path, err)
			continue
		}
		if want := "-f images/" + path + " -t " + r + ":"; !strings.Contains(string(b), want) {
			t.Errorf("images/%s: no build command %q in its header", path, want)
		}
	}
	if ours < 2 {
		t.Errorf("found %d gatehouse images in the chart's values (%v); want the control plane's and extauth's", ours, repos)
	}
}
