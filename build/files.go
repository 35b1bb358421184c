package build

import (
	"errors"
	"fmt"
	gobuild "go/build"
	"strings"
)

// files lists the .go files of the module's root package as the host's build would
// select them (its GOOS, GOARCH, cgo setting and build tags). It reads the folder with
// go/build rather than running `go list`: a go command loads the module graph first,
// which would slow every rebuild on a save under `gatehouse dev --plugin-module`. The
// go command applies the same build constraints again to the files it is given, so a
// file selected here that the build would not select is still left out.
func (b *builder) files() ([]string, error) {
	pkg, err := b.rootPackage()
	if err != nil {
		return nil, err
	}
	return append(append([]string(nil), pkg.GoFiles...), pkg.CgoFiles...), nil
}

// rootPackage reads the module's root package as files describes.
func (b *builder) rootPackage() (*gobuild.Package, error) {
	ctx := gobuild.Default
	ctx.GOOS, ctx.GOARCH = b.c.GOOS, b.c.GOARCH
	ctx.CgoEnabled = orDefault(b.c.Settings["CGO_ENABLED"], "1") == "1"
	ctx.BuildTags = nil
	if tags := b.c.Settings["-tags"]; tags != "" {
		ctx.BuildTags = strings.Split(tags, ",")
	}
	ctx.GOPATH, ctx.Dir = "", b.dir
	pkg, err := ctx.ImportDir(b.dir, gobuild.ImportComment)
	var noGo *gobuild.NoGoError
	switch {
	case errors.As(err, &noGo):
		return nil, fmt.Errorf("plugin build: %s has no Go files the host's build would select; a plugin is a main package at the module root", b.dir)
	case err != nil:
		return nil, fmt.Errorf("plugin build: reading the package in %s: %w", b.dir, err)
	case pkg.Name != "main":
		return nil, fmt.Errorf("plugin build: the package in %s is %q, not main; a plugin is a main package at the module root", b.dir, pkg.Name)
	case len(pkg.SFiles)+len(pkg.CFiles)+len(pkg.CXXFiles) > 0:
		return nil, fmt.Errorf("plugin build: the package in %s has assembly or C files; only Go (and cgo) files can be built with a unique plugin path", b.dir)
	}
	return pkg, nil
}
