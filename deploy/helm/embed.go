// Package helm embeds the gatehouse Helm chart, so `gatehouse install` installs the
// chart of its own release (the CLI version and the chart version always match).
package helm

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

//go:embed all:gatehouse
var files embed.FS

// Chart loads the embedded chart.
func Chart() (*chart.Chart, error) {
	var bufs []*loader.BufferedFile
	err := fs.WalkDir(files, "gatehouse", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		bufs = append(bufs, &loader.BufferedFile{Name: strings.TrimPrefix(path, "gatehouse/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("helm: embedded chart: %w", err)
	}
	c, err := loader.LoadFiles(bufs)
	if err != nil {
		return nil, fmt.Errorf("helm: embedded chart: %w", err)
	}
	return c, nil
}
