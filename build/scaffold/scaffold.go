// Package scaffold writes a new plugin module (`gatehouse plugin new`): go.mod pinned to
// the host's build contract, the plugin, its unit tests, the step and request cases,
// the resources `gatehouse dev --plugin-module` serves, a Makefile for the author's
// loop and a Dockerfile for its image. The files are templates embedded in the binary.
package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"gatehouse.dev/gatehouse/loader"
)

//go:embed template/*.tmpl
var templates embed.FS

// files maps each template to the file it writes.
var files = map[string]string{
	"go.mod.tmpl":       "go.mod",
	"main.go.tmpl":      "main.go",
	"main_test.go.tmpl": "main_test.go",
	"step.yaml.tmpl":    "step.yaml",
	"cases.yaml.tmpl":   "cases.yaml",
	// What `gatehouse dev --plugin-module .` serves: a route through the plugin's step.
	"dev_resources.yaml.tmpl": "dev/gatehouse.yaml",
	"Makefile.tmpl":           "Makefile",
	"Dockerfile.tmpl":         "Dockerfile",
	"gitignore.tmpl":          ".gitignore",
	"dockerignore.tmpl":       ".dockerignore",
}

// Options say what to write.
type Options struct {
	// Name is the plugin's name: the directory (by default), the last element of the
	// module path, the step's name and NAME.so.
	Name string
	// Dir is where the module is written; empty means ./Name. It must not exist or be
	// empty.
	Dir string
	// ModulePath is the module path; empty means example.com/Name.
	ModulePath string
	// GatehouseSrc is the gatehouse checkout the host was built from; when set, go.mod
	// replaces gatehouse.dev/gatehouse with it (needed while it is not published).
	GatehouseSrc string
	// Contract is the host's; it gives the Go release and the gatehouse version.
	Contract *loader.Contract
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)

// CheckName reports a name that cannot be a plugin's.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not a plugin name: use 1 to 40 lower-case letters, digits, - and _, starting with a letter (it names the module, the step and NAME.so)", name)
	}
	return nil
}

// Write writes the module and returns its directory and the files written, in order.
// It refuses a bad name and a directory that exists and is not empty, and never
// overwrites a file.
func Write(o Options) (dir string, written []string, err error) {
	if err := CheckName(o.Name); err != nil {
		return "", nil, err
	}
	dir = o.Dir
	if dir == "" {
		dir = o.Name
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return "", nil, fmt.Errorf("%s is not empty; choose a new directory with --dir (nothing was written)", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	data, err := templateData(o)
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	for _, tmpl := range sortedTemplates() {
		out, err := render(tmpl, data)
		if err != nil {
			return "", nil, err
		}
		path := filepath.Join(dir, files[tmpl])
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", written, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return "", written, err
		}
		_, werr := f.Write(out)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", written, werr
		}
		written = append(written, files[tmpl])
	}
	return dir, written, nil
}

type data struct {
	Name, ModulePath, GoLine, Toolchain, Require, Version, GatehouseSrc string
}

func templateData(o Options) (data, error) {
	c := o.Contract
	if c == nil {
		return data{}, errors.New("no host contract")
	}
	d := data{Name: o.Name, ModulePath: o.ModulePath, Version: strings.TrimPrefix(c.GatehouseVersion, "v")}
	if d.ModulePath == "" {
		d.ModulePath = "example.com/" + o.Name
	}
	d.Require = "v" + d.Version
	// The module's go line is the host's Go minor release; the toolchain line asks for
	// the host's exact release, which is what `gatehouse plugin build` compiles with.
	var major, minor, patch int
	if n, _ := fmt.Sscanf(c.GoVersion, "go%d.%d.%d", &major, &minor, &patch); n >= 2 {
		d.GoLine = fmt.Sprintf("%d.%d.0", major, minor)
		if n == 3 {
			d.Toolchain = c.GoVersion
		}
	} else {
		return data{}, fmt.Errorf("the host's Go version %q is not a release; build gatehouse with a released Go", c.GoVersion)
	}
	if o.GatehouseSrc != "" {
		abs, err := filepath.Abs(o.GatehouseSrc)
		if err != nil {
			return data{}, err
		}
		if _, err := os.Stat(filepath.Join(abs, "pluginapi", "plugin.go")); err != nil {
			return data{}, fmt.Errorf("--gatehouse-src %s is not a checkout of %s (it has no pluginapi/plugin.go)", abs, loader.GatehouseModule)
		}
		d.GatehouseSrc = abs
	}
	return d, nil
}

func render(name string, d data) ([]byte, error) {
	t, err := template.ParseFS(templates, "template/"+name)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sortedTemplates lists the templates in the order their files are printed.
func sortedTemplates() []string {
	return []string{"go.mod.tmpl", "main.go.tmpl", "main_test.go.tmpl", "step.yaml.tmpl", "cases.yaml.tmpl",
		"dev_resources.yaml.tmpl", "Makefile.tmpl", "Dockerfile.tmpl", "gitignore.tmpl", "dockerignore.tmpl"}
}
