// Package plugintest runs a plugin in a plugin author's own tests, in-process and
// without building a .so, exactly as the server runs it: the step's config is decoded
// strictly into NewConfigInstance's value by the server's own code (pluginhost), then
// GetAuthService and Start are called, and every answer of Authorize is checked as the
// server checks it before it goes to Envoy (header names and values, deny status).
//
//	svc := plugintest.Start(t, Plugin, `{"Header": "x-api-key", "Allowed": ["alpha"]}`)
//	svc.Authorize(t, plugintest.NewRequest("GET", "/api").Header("X-Api-Key", "alpha").Build()).
//		Allowed().RequestHeader("x-checked-by", "myplugin")
//
// Like pluginapi it imports the standard library only.
package plugintest
