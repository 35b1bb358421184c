package oidc

import (
	"net/http"
	"strings"
	"time"
)

// cookieValue returns the value of the named cookie in a Cookie header.
func cookieValue(header, name string) (string, bool) {
	for header != "" {
		var part string
		part, header, _ = strings.Cut(header, ";")
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		if k == name {
			return strings.Trim(v, `"`), true
		}
	}
	return "", false
}

// withoutCookies returns the Cookie header without the cookies drop selects, and
// whether anything was removed.
func withoutCookies(header string, drop func(name string) bool) (string, bool) {
	var b strings.Builder
	removed := false
	for rest := header; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ";")
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, _, _ := strings.Cut(part, "=")
		if drop(k) {
			removed = true
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(part)
	}
	if !removed {
		return header, false
	}
	return b.String(), true
}

// setCookie renders a Set-Cookie value with the step's attributes. maxAge < 0 expires
// the cookie; 0 uses the configured max age (a browser-session cookie when unset).
func (s *settings) setCookie(name, value, path string, maxAge int) string {
	c := &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     path,
		Domain:   s.cookie.domain,
		Secure:   s.cookie.secure,
		HttpOnly: s.cookie.httpOnly,
		SameSite: s.cookie.sameSite,
		MaxAge:   maxAge,
	}
	if maxAge == 0 {
		c.MaxAge = s.cookie.maxAge
	}
	if c.MaxAge < 0 {
		c.Expires = time.Unix(0, 0)
	}
	return c.String()
}

// sessionCookie sets (or, with value "", expires) the session cookie.
func (s *settings) sessionCookie(value string) string {
	if value == "" {
		return s.setCookie(s.cookieName, "", s.cookie.path, -1)
	}
	return s.setCookie(s.cookieName, value, s.cookie.path, 0)
}

// flowCookie sets (or, with value "", expires) the cookie of one login. It is scoped
// to the callback path, so the application never sees it, and is Lax at most: the
// provider's redirect back is a cross-site navigation that Strict would strip it from.
func (s *settings) flowCookie(name, value string) string {
	c := &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     s.callbackPath,
		Secure:   s.cookie.secure,
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		MaxAge:   int(flowTTL / time.Second),
	}
	if s.cookie.sameSite == http.SameSiteNoneMode {
		c.SameSite = http.SameSiteNoneMode
	}
	if value == "" {
		c.MaxAge, c.Expires = -1, time.Unix(0, 0)
	}
	return c.String()
}

// ownCookie reports whether a cookie name belongs to the step (session or flow).
func (s *settings) ownCookie(name string) bool {
	return name == s.cookieName || strings.HasPrefix(name, s.flowCookiePrefx)
}
