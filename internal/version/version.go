// Package version holds the Gatehouse release this binary is. Plugin images are tagged
// with it and plugins are checked against it.
package version

// Version is the Gatehouse release, set at link time with
// -ldflags "-X gatehouse.dev/gatehouse/internal/version.Version=…" for releases.
var Version = "0.1.0"
