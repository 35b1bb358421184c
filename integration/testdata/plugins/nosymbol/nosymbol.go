// Command nosymbol is a test plugin that exports Other instead of Plugin.
package main

import (
	"context"
	"errors"

	"gatehouse.dev/gatehouse/pluginapi"
)

type otherPlugin struct{}

// Other is exported under a name the step does not ask for.
var Other pluginapi.ExtAuthPlugin = otherPlugin{}

func (otherPlugin) NewConfigInstance(context.Context) (any, error) { return &struct{}{}, nil }

func (otherPlugin) GetAuthService(context.Context, any) (pluginapi.AuthService, error) {
	return nil, errors.New("nosymbol: not meant to serve")
}

func main() {}
