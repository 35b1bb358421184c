package build

import (
	"strings"

	"gatehouse.dev/gatehouse/loader"
)

// Flags returns the `go build` arguments (before the output and the files) and the
// environment that build a plugin the way the host described by c was built: the same
// Go release, -trimpath, cgo, GOEXPERIMENT, GOOS/GOARCH and CPU level, build tags and
// compiler flags. -race, -msan and -asan only if the host has them (a server normally
// does not), never -cover, and none of the caller's GOFLAGS.
func Flags(c *loader.Contract) (args, env []string) {
	s := c.Settings
	args = []string{"build", "-buildmode=plugin"}
	for _, k := range []string{"-race", "-msan", "-asan"} {
		if s[k] == "true" {
			args = append(args, k)
		}
	}
	if s["-trimpath"] == "true" {
		args = append(args, "-trimpath")
	}
	for _, k := range []string{"-tags", "-gcflags", "-asmflags"} {
		if v := s[k]; v != "" {
			args = append(args, k+"="+v)
		}
	}
	env = []string{
		"CGO_ENABLED=" + orDefault(s["CGO_ENABLED"], "1"),
		"GOOS=" + c.GOOS,
		"GOARCH=" + c.GOARCH,
		// Set even when empty, so a GOEXPERIMENT in the caller's environment cannot leak in.
		"GOEXPERIMENT=" + s["GOEXPERIMENT"],
		// The caller's GOFLAGS could add -race or -tags; VCS stamping does not matter here.
		"GOFLAGS=-buildvcs=false",
	}
	for k, v := range s {
		if isArchLevel(k) {
			env = append(env, k+"="+v)
		}
	}
	if tc := toolchain(c.GoVersion); tc != "" {
		env = append(env, "GOTOOLCHAIN="+tc)
	}
	return args, env
}

// toolchain is the GOTOOLCHAIN value that selects the host's Go release, or "" for a
// development build of Go, which cannot be fetched.
func toolchain(goVersion string) string {
	v, _, _ := strings.Cut(goVersion, " ")
	v, _, _ = strings.Cut(v, "-X:")
	if !strings.HasPrefix(v, "go1.") || strings.ContainsAny(v, "- ") {
		return ""
	}
	return v
}

func isArchLevel(k string) bool {
	switch k {
	case "GOAMD64", "GOARM", "GOARM64", "GO386", "GOPPC64", "GORISCV64", "GOMIPS", "GOMIPS64":
		return true
	}
	return false
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
