package oidc

import (
	"net/url"
	"strings"
)

// returnURL is where the browser goes after login: the app's origin followed by the
// path of the request that needed a login. Only the path is taken from the request,
// and only when it is a plain origin-relative path, so no Host header, absolute-form
// target, scheme-relative "//host", backslash or control character can send the
// browser anywhere but the application.
func (s *settings) returnURL(requestPath string) string {
	if !safePath(requestPath) {
		return s.appURL.String()
	}
	u := s.appOrigin + requestPath
	if !s.sameOrigin(u) {
		return s.appURL.String()
	}
	return u
}

func safePath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '\\' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// sameOrigin reports whether u parses to the app's scheme and host with no userinfo.
func (s *settings) sameOrigin(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.User == nil && p.Scheme == s.appURL.Scheme && p.Host == s.appURL.Host
}
