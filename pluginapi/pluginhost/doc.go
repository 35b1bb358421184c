// Package pluginhost is what a host does with a plugin, written once: decode a step's
// config strictly into the plugin's config type (DecodeConfig), build and start its
// service (NewService, Start), and check every answer before it goes on to Envoy
// (CheckResponse).
//
// The server (loader, server/chain), `gatehouse plugin test` and the plugin author's
// unit tests (pluginapi/plugintest) all call this package, so a plugin meets the same
// rules and the same error texts everywhere. Like pluginapi, it imports the standard
// library only, so a plugin module can use it without sharing anything else with the
// host.
package pluginhost
