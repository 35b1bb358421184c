// Command initexit is a test plugin whose init code exits the process, as a plugin that
// calls log.Fatal when a check fails at start would.
package main

import (
	"fmt"
	"os"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Plugin is never used: init exits first.
var Plugin pluginapi.ExtAuthPlugin

func init() {
	fmt.Fprintln(os.Stderr, "initexit: license check failed")
	os.Exit(3)
}

func main() {}
