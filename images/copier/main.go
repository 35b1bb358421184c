// Command gatehouse-plugin-copier is the entrypoint of a Gatehouse plugin image. Run as an
// init container, it copies the compiled plugins kept in the image into the auth-plugins
// volume that the extauth container loads them from.
//
// Build it static (CGO_ENABLED=0): the plugin image has no libc.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run copies the plugins and returns the exit code: 0 on success, 1 when copying failed,
// 2 for bad arguments.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gatehouse-plugin-copier", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "/compiled-auth-plugins", "directory holding the compiled `.so` plugins")
	to := fs.String("to", "/auth-plugins", "directory the extauth server loads plugins from")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "copier: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if err := copyPlugins(*from, *to, stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// copyPlugins copies every regular *.so file in from into to. Each file is written to a
// temporary name in to, synced and renamed, so the extauth server never sees half a plugin.
func copyPlugins(from, to string, stdout io.Writer) error {
	names, err := pluginNames(from)
	if err != nil {
		return err
	}
	if err := checkDestination(to); err != nil {
		return err
	}
	for _, name := range names {
		src, dst := filepath.Join(from, name), filepath.Join(to, name)
		n, err := copyFile(src, dst)
		if err != nil {
			return fmt.Errorf("copier: %s: %w", src, err)
		}
		fmt.Fprintf(stdout, "copied %s -> %s (%d bytes)\n", src, dst, n)
	}
	return syncDir(to)
}

// pluginNames lists the regular *.so files of dir in name order.
func pluginNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("copier: source: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".so") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("copier: %s: no .so files to copy; the image holds no compiled plugins", dir)
	}
	sort.Strings(names)
	return names, nil
}

// checkDestination fails when dir is missing, is not a directory or cannot be written,
// before any plugin is copied.
func checkDestination(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("copier: %s: no such directory; mount the auth-plugins volume there", dir)
	}
	if err != nil {
		return fmt.Errorf("copier: destination: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("copier: %s: not a directory", dir)
	}
	probe, err := os.CreateTemp(dir, ".gatehouse-probe-*")
	if err != nil {
		return fmt.Errorf("copier: %s: not writable: %w", dir, err)
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return fmt.Errorf("copier: %s: %w", dir, err)
	}
	return nil
}

// copyFile writes src to dst through a temporary file in dst's directory and returns the
// number of bytes copied.
func copyFile(src, dst string) (n int64, err error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if n, err = io.Copy(tmp, in); err != nil {
		return 0, err
	}
	if err = tmp.Chmod(0o755); err != nil {
		return 0, err
	}
	if err = tmp.Sync(); err != nil {
		return 0, err
	}
	if err = tmp.Close(); err != nil {
		return 0, err
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return 0, err
	}
	return n, nil
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("copier: %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("copier: %s: sync: %w", dir, err)
	}
	return nil
}
