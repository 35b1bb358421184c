package loader

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hostLibc finds the C library mapped into this process and, for glibc, its version:
// the newest GLIBC_x.y symbol version libc.so.6 defines, which is exactly what the
// dynamic linker checks a plugin's needs against. It returns nil when no C library is
// mapped (a static binary cannot open plugins anyway).
func hostLibc() *Libc {
	mf, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil
	}
	defer mf.Close()
	sc := bufio.NewScanner(mf)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		path := fields[len(fields)-1]
		base := filepath.Base(path)
		switch {
		case strings.HasPrefix(base, "ld-musl-"), strings.HasPrefix(base, "libc.musl-"):
			return &Libc{Name: "musl", Path: path}
		case base == "libc.so.6" || (strings.HasPrefix(base, "libc-") && strings.HasSuffix(base, ".so")):
			return &Libc{Name: "glibc", Version: glibcVersion(path), Path: path}
		}
	}
	return nil
}

func glibcVersion(path string) string {
	f, err := openELF(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	defs, err := f.DynamicVersions()
	if err != nil {
		return ""
	}
	newest := ""
	for _, d := range defs {
		if strings.HasPrefix(d.Name, "GLIBC_") && !strings.HasPrefix(d.Name, "GLIBC_PRIVATE") {
			if v := glibcNumber(d.Name); newest == "" || compareDotted(v, newest) > 0 {
				newest = v
			}
		}
	}
	return newest
}

// glibcNumber turns a symbol version "GLIBC_2.34" into "2.34".
func glibcNumber(v string) string { return strings.TrimPrefix(v, "GLIBC_") }

// compareDotted compares dotted decimal versions ("2.9" < "2.34").
func compareDotted(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
