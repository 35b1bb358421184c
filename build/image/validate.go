package image

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// validate checks every option and returns the image reference Repository:Version. It
// reports all problems at once so one run shows everything to fix.
func (o Options) validate() (string, error) {
	var errs []error
	ref := o.Repository + ":" + o.Version
	if o.Version == "" {
		errs = append(errs, errors.New("version: required"))
	} else if _, err := name.NewTag(ref); err != nil {
		errs = append(errs, fmt.Errorf("repository %q, version %q: not an image reference: %w", o.Repository, o.Version, err))
	}
	if len(o.PluginFiles) == 0 {
		errs = append(errs, errors.New("plugin files: none given; pass the .so files built with `gatehouse plugin build`"))
	}
	seen := map[string]string{}
	for _, p := range o.PluginFiles {
		base := filepath.Base(p)
		if prev, ok := seen[base]; ok {
			errs = append(errs, fmt.Errorf("%s: same file name as %s; both would be %s/%s", p, prev, PluginDir, base))
			continue
		}
		seen[base] = p
		if !strings.HasSuffix(base, ".so") {
			errs = append(errs, fmt.Errorf("%s: plugin file name must end in .so", p))
			continue
		}
		if err := checkELF(p, elf.ET_DYN, false); err != nil {
			errs = append(errs, err)
		}
	}
	if o.CopierBinary == "" {
		errs = append(errs, errors.New("copier: required; build it with `CGO_ENABLED=0 go build ./images/copier`"))
	} else if err := checkELF(o.CopierBinary, elf.ET_EXEC, true); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return "", fmt.Errorf("build/image: %w", err)
	}
	return ref, nil
}

// checkELF checks that path is a linux/amd64 ELF file of type typ; with static, that it
// needs no dynamic loader, since the plugin image has none.
func checkELF(path string, typ elf.Type, static bool) error {
	st, err := os.Stat(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", path, pe.Err)
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF file: %w", path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%s: built for %s, the image is linux/amd64", path, f.Machine)
	}
	if f.Type != typ && !(static && f.Type == elf.ET_DYN) {
		return fmt.Errorf("%s: ELF type %s, want %s", path, f.Type, typ)
	}
	if static {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return fmt.Errorf("%s: dynamically linked; build it with CGO_ENABLED=0", path)
			}
		}
	}
	return nil
}
