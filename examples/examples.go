// Package examples holds the resources `gatehouse dev` serves when it is given none,
// and walk-throughs in the folders beside it.
package examples

import (
	"embed"
	"io/fs"
	"path"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

//go:embed default/*.yaml
var defaults embed.FS

// Default returns the embedded example resources.
func Default() (*apiv1.Set, error) {
	set := &apiv1.Set{}
	entries, err := fs.ReadDir(defaults, "default")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := path.Join("default", e.Name())
		data, err := defaults.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if err := set.Add(data, "examples/"+name); err != nil {
			return nil, err
		}
	}
	return set, nil
}
