package oidc

import (
	"net/http"
	"strings"

	"gatehouse.dev/gatehouse/pluginapi"
)

// redirect denies with a 302 to location, uncacheable.
func redirect(location string) *pluginapi.AuthorizationResponse {
	return pluginapi.Deny(http.StatusFound, "").
		WithResponseHeader("location", location).
		WithResponseHeader("cache-control", "no-store")
}

// deny answers with status and a short plain-text reason that names no secret.
func deny(status int, reason string) *pluginapi.AuthorizationResponse {
	return pluginapi.Deny(status, reason+"\n").
		WithResponseHeader("content-type", "text/plain; charset=utf-8").
		WithResponseHeader("cache-control", "no-store")
}

// wantsNoRedirect reports requests a redirect to a login page would only confuse:
// script calls (X-Requested-With: XMLHttpRequest) and JSON clients that do not
// also accept HTML.
func wantsNoRedirect(req *pluginapi.AuthorizationRequest) bool {
	if xrw, _ := req.Header("x-requested-with"); strings.EqualFold(xrw, "XMLHttpRequest") {
		return true
	}
	accept, _ := req.Header("accept")
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html")
}
