package build

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// linkFlags are the -ldflags of a plugin build with o.
func linkFlags(o Options) string {
	var fs []string
	if o.OmitDWARF {
		// With no DWARF there is nothing to compress: -compressdwarf=false also spares
		// the linker its probe of the external linker for --compress-debug-sections.
		fs = append(fs, "-w", "-compressdwarf=false")
	}
	if o.Linker != "" {
		fs = append(fs, "-extldflags=-fuse-ld="+o.Linker)
	}
	return strings.Join(fs, " ")
}

// fastLinkers are the external linkers FastLinker tries, fastest first. A plugin is
// always linked externally (-buildmode=plugin), and the C compiler's default, GNU ld,
// is the slowest of them.
var fastLinkers = []string{"mold", "lld", "gold"}

// FastLinker returns the first of mold, lld and gold that the C compiler of the go
// command (`go env CC`) can link a shared object with, or "" when none can. It links an
// empty shared object with each, so a linker that is installed but broken is not picked.
func FastLinker(ctx context.Context, goCmd string) string {
	if goCmd == "" {
		goCmd = "go"
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, goCmd, "env", "CC").Output()
	cc := strings.Fields(strings.TrimSpace(string(out)))
	if err != nil || len(cc) == 0 {
		return ""
	}
	dir, err := os.MkdirTemp("", "gatehouse-linker-")
	if err != nil {
		return ""
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "empty.c")
	if err := os.WriteFile(src, []byte("int gatehouse_probe;\n"), 0o644); err != nil {
		return ""
	}
	for _, ld := range fastLinkers {
		args := append(cc[1:], "-shared", "-fPIC", "-fuse-ld="+ld, "-o", filepath.Join(dir, ld+".so"), src)
		if exec.CommandContext(ctx, cc[0], args...).Run() == nil {
			return ld
		}
	}
	return ""
}

var linkFailure = regexp.MustCompile(`(?m)link: running \S+ failed`)

// linkerFailed reports a build that failed in the external link, not in compiling.
func linkerFailed(err error) bool {
	var ce *CommandError
	// The go linker says "link: running gcc failed: exit status 1" (or clang, cc …).
	return errors.As(err, &ce) && linkFailure.MatchString(ce.Stderr)
}
