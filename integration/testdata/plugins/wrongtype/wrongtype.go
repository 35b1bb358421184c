// Command wrongtype is a test plugin whose Plugin lacks GetAuthService.
package main

import "context"

type halfPlugin struct{}

// Plugin has only one of the two methods of pluginapi.ExtAuthPlugin.
var Plugin = halfPlugin{}

func (halfPlugin) NewConfigInstance(context.Context) (any, error) { return &struct{}{}, nil }

func main() {}
