package oidc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"

	"gatehouse.dev/gatehouse/integration/bench/checkload"
	"gatehouse.dev/gatehouse/integration/harness"
)

// pageAccept is a browser's Accept for a page load: the step answers it with a
// redirect to the provider rather than 401.
const pageAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// login signs in once through the step of m, as a browser behind Envoy would: the
// Check of a protected page answers 302 to the provider with a flow cookie, the
// provider's dev login and consent forms are posted with a cookie jar, and the Check
// of the callback answers 302 back to the page with the session cookie. It returns
// that cookie as "name=value".
func login(ctx context.Context, tb *harnessTB, client authv3.AuthorizationClient, m mode, issuer string) (string, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return "", err
	}
	page, _ := url.Parse(appOrigin + protectedPath)
	toProvider, err := redirect(ctx, client, m, jar, page)
	if err != nil {
		return "", fmt.Errorf("%s: Check of %s: %w", m.name, page, err)
	}
	var back string
	if err := tb.do(func() { back = harness.NewBrowser(tb).ProviderLogin(tb, issuer, toProvider, "bench") }); err != nil {
		return "", fmt.Errorf("%s: provider login: %w", m.name, err)
	}
	cb, err := url.Parse(back)
	if err != nil || !strings.HasPrefix(back, appOrigin+callbackPath+"?") {
		return "", fmt.Errorf("%s: the provider sent the browser to %q, not to the callback", m.name, back)
	}
	toPage, err := redirect(ctx, client, m, jar, cb)
	if err != nil {
		return "", fmt.Errorf("%s: Check of the callback: %w", m.name, err)
	}
	if toPage != page.String() {
		return "", fmt.Errorf("%s: the callback sent the browser to %q, want %s", m.name, toPage, page)
	}
	for _, c := range jar.Cookies(page) {
		if c.Name == m.cookieName {
			return c.Name + "=" + c.Value, nil
		}
	}
	return "", fmt.Errorf("%s: the callback set no %s cookie", m.name, m.cookieName)
}

// redirect sends the Check of a browser GET of u with the jar's cookies, expects a
// 302, stores the cookies it sets and returns its Location.
func redirect(ctx context.Context, client authv3.AuthorizationClient, m mode, jar http.CookieJar, u *url.URL) (string, error) {
	var cookies []string
	for _, c := range jar.Cookies(u) {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	extra := map[string]string{"accept": pageAccept}
	if len(cookies) > 0 {
		extra["cookie"] = strings.Join(cookies, "; ")
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := client.Check(cctx, checkload.BrowserRequest(m.configID, u.RequestURI(), extra))
	if err != nil {
		return "", err
	}
	denied := resp.GetDeniedResponse()
	if st := denied.GetStatus().GetCode(); st != http.StatusFound {
		return "", fmt.Errorf("answered %s with HTTP %d (%s), want a 302", code.Code(resp.GetStatus().GetCode()), st, denied.GetBody())
	}
	var loc string
	var set []*http.Cookie
	for _, h := range denied.GetHeaders() {
		switch strings.ToLower(h.GetHeader().GetKey()) {
		case "location":
			loc = h.GetHeader().GetValue()
		case "set-cookie":
			c, err := http.ParseSetCookie(h.GetHeader().GetValue())
			if err != nil {
				return "", fmt.Errorf("set-cookie: %w", err)
			}
			set = append(set, c)
		}
	}
	if loc == "" {
		return "", errors.New("302 without a location")
	}
	jar.SetCookies(u, set)
	return loc, nil
}

// sessionRequest is the Check the OIDC phase loads gatehouse with: a page load with
// the session cookie and one cookie of the application's own.
func sessionRequest(m mode, session string) *authv3.CheckRequest {
	return checkload.BrowserRequest(m.configID, protectedPath, map[string]string{"accept": pageAccept, "cookie": session + "; theme=dark"})
}

// checkSession sends req once and makes sure it is the answer the load means to
// measure: OK, the ID token in x-id-token and the session cookie not passed on. It
// returns the ID token and whether the answer set a cookie, which the step does only
// when it refreshed the session.
func checkSession(ctx context.Context, client authv3.AuthorizationClient, req *authv3.CheckRequest) (idToken string, setCookie bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := client.Check(cctx, req)
	if err != nil {
		return "", false, err
	}
	if got := code.Code(resp.GetStatus().GetCode()); got != code.Code_OK {
		return "", false, fmt.Errorf("status %s with HTTP %d, want OK", got, resp.GetDeniedResponse().GetStatus().GetCode())
	}
	idToken, cookie := checkload.HeaderOf(resp, "x-id-token"), checkload.HeaderOf(resp, "cookie")
	setCookie = slices.ContainsFunc(resp.GetOkResponse().GetResponseHeadersToAdd(), func(h *corev3.HeaderValueOption) bool {
		return strings.EqualFold(h.GetHeader().GetKey(), "set-cookie")
	})
	switch {
	case strings.Count(idToken, ".") != 2:
		return "", false, fmt.Errorf("allowed without an ID token in x-id-token (%v)", resp.GetOkResponse())
	case cookie != "theme=dark":
		return "", false, fmt.Errorf("allowed with cookie %q for the upstream, want only theme=dark", cookie)
	}
	return idToken, setCookie, nil
}
