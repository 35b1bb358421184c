package loader

import (
	"fmt"
	"strings"
)

// settingValue is a build setting with its default filled in, so that an absent
// -trimpath and -trimpath=false compare equal.
func settingValue(s map[string]string, key string) string {
	v := s[key]
	switch key {
	case "-trimpath", "-race", "-msan", "-asan", "-cover":
		if v == "" {
			return "false"
		}
	case "-compiler":
		if v == "" {
			return "gc"
		}
	}
	return v
}

// settingFix says how to rebuild so that key equals the host's value h.
func settingFix(key, h string) string {
	switch key {
	case "-trimpath", "-race", "-msan", "-asan":
		if h == "true" {
			return "rebuild with " + key
		}
		return "rebuild without " + key
	case "GOEXPERIMENT":
		if h == "" {
			return "rebuild with GOEXPERIMENT unset"
		}
		return "rebuild with GOEXPERIMENT=" + h
	case "-gcflags", "-asmflags", "-pgo":
		if h == "" {
			return "rebuild without " + key
		}
		return fmt.Sprintf("rebuild with %s=%q", key, h)
	}
	return fmt.Sprintf("rebuild with %s=%s", key, h)
}

// archLevel reports whether key selects a CPU feature level (GOAMD64=v3, GOARM64=v8.1).
func archLevel(key string) bool {
	switch key {
	case "GOAMD64", "GOARM", "GOARM64", "GO386", "GOPPC64", "GORISCV64", "GOMIPS", "GOMIPS64", "GOWASM":
		return true
	}
	return false
}

// goRelease is a Go version without the experiments suffix: "go1.26.8 X:arenas" and
// "go1.26.8-X:arenas" are both "go1.26.8" (GOEXPERIMENT is compared on its own).
func goRelease(v string) string {
	if i := strings.Index(v, " X:"); i >= 0 {
		v = v[:i]
	}
	if i := strings.Index(v, "-X:"); i >= 0 {
		v = v[:i]
	}
	return v
}

// goMinor is "go1.26" for "go1.26.8".
func goMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
