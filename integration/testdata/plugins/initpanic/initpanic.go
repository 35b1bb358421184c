// Command initpanic is a test plugin that panics while it is being opened.
package main

import "gatehouse.dev/gatehouse/pluginapi"

// Plugin is never set: init panics first.
var Plugin pluginapi.ExtAuthPlugin

func init() {
	panic("initpanic: cannot reach the license server")
}

func main() {}
