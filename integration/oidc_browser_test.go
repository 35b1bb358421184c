package integration_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"gatehouse.dev/gatehouse/server/oidc"
)

const chromiumPath = "/usr/bin/chromium"

// TestOIDCBrowserLogin logs in with a real headless Chromium through gatehouse dev, so
// redirects, cookie attributes and SameSite are applied by a browser, not by a test client.
func TestOIDCBrowserLogin(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s is missing: run `make test`, which installs it (apt-get install -y chromium)", chromiumPath)
	}
	d := startDevOIDC(t, devOptions{})
	d.waitServing(t)

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()

	// The browser starts on a context without a deadline (a deadline there would
	// bound the browser's life); the login steps run under one.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()
	err := chromedp.Do(ctx,
		chromedp.Navigate(d.appURL+"/dashboard?tab=1"),
		// The provider's dev login page, then its consent page.
		chromedp.WaitVisible(chromedp.CSS(`input[name="login"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), testUser),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "any-password"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[autofocus]`)),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	)
	if err != nil {
		at, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("browser login: %v (at %s)", err, at)
	}
	// Back at the application: the echo upstream's JSON. The page navigates through
	// the callback meanwhile, so a read may hit a page being replaced: read again.
	var finalURL, page string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		finalURL, _ = chromedp.Run(ctx, chromedp.Location())
		page, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		if strings.HasPrefix(finalURL, d.appURL+"/dashboard") && strings.Contains(page, "x-id-token") {
			break
		}
	}
	cookies, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) ([]*network.Cookie, error) {
		res, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{d.appURL + "/"}})
		return res.Cookies, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if finalURL != d.appURL+"/dashboard?tab=1" {
		t.Errorf("browser ended at %q, want the original URL", finalURL)
	}
	var echo struct {
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal([]byte(page), &echo); err != nil {
		t.Fatalf("page is not the echo JSON: %v\n%s", err, page)
	}
	if got := claims(t, echo.Headers["x-id-token"])["email"]; got != testUser+"@example.test" {
		t.Errorf("upstream x-id-token email = %v", got)
	}
	var session *network.Cookie
	for _, c := range cookies {
		if c.Name == oidc.DefaultCookieName {
			session = c
		}
		if strings.HasPrefix(c.Name, oidc.DefaultCookieName+"_flow_") {
			t.Errorf("flow cookie %s left in the browser after the login", c.Name)
		}
	}
	if session == nil {
		t.Fatalf("no session cookie in the browser; cookies: %+v", cookies)
	}
	if !session.HTTPOnly || session.SameSite != network.CookieSameSiteLax || session.Path != "/" {
		t.Errorf("session cookie attributes: httpOnly=%v sameSite=%q path=%q; want true, Lax, /", session.HTTPOnly, session.SameSite, session.Path)
	}
}
