package harness

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Browser is a cookie-jar HTTP client that does not follow redirects by itself, so a
// test sees every hop.
type Browser struct {
	*http.Client
}

// NewBrowser returns a Browser with an empty cookie jar.
func NewBrowser(t testing.TB) *Browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Browser{&http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Get fetches u once and returns the response with its body read.
func (b *Browser) Get(t testing.TB, u string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(t, req)
}

func (b *Browser) do(t testing.TB, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := b.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// Location resolves the response's Location against its request URL.
func Location(t testing.TB, resp *http.Response) string {
	t.Helper()
	loc, err := resp.Location()
	if err != nil {
		t.Fatalf("%s %s answered %d without a Location: %v", resp.Request.Method, resp.Request.URL, resp.StatusCode, err)
	}
	return loc.String()
}

var (
	formAction = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
	promptName = regexp.MustCompile(`name="prompt" value="([a-z]+)"`)
)

// ProviderLogin plays the user at the provider's dev login and consent pages: from
// authURL it follows the provider's redirects, submits the forms as login, and
// returns the first redirect that leaves the provider (the callback with the code).
func (b *Browser) ProviderLogin(t testing.TB, issuer, authURL, login string) string {
	t.Helper()
	next := authURL
	for hop := 0; hop < 20; hop++ {
		if !strings.HasPrefix(next, issuer+"/") {
			return next
		}
		resp, body := b.Get(t, next)
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			next = Location(t, resp)
		case resp.StatusCode == http.StatusOK:
			next = b.submit(t, resp, body, login)
		default:
			t.Fatalf("provider answered %s with %d: %s", next, resp.StatusCode, body)
		}
	}
	t.Fatalf("provider login did not leave the provider after 20 hops")
	return ""
}

// submit posts the login or consent form of a dev interaction page.
func (b *Browser) submit(t testing.TB, page *http.Response, body, login string) string {
	t.Helper()
	action, prompt := formAction.FindStringSubmatch(body), promptName.FindStringSubmatch(body)
	if action == nil || prompt == nil {
		t.Fatalf("no login or consent form at %s:\n%s", page.Request.URL, body)
	}
	target, err := page.Request.URL.Parse(action[1])
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"prompt": {prompt[1]}}
	if prompt[1] == "login" {
		form.Set("login", login)
		form.Set("password", "any-password")
	}
	req, _ := http.NewRequest(http.MethodPost, target.String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, rbody := b.do(t, req)
	if resp.StatusCode < 300 || resp.StatusCode >= 400 {
		t.Fatalf("posting the %s form answered %d: %s", prompt[1], resp.StatusCode, rbody)
	}
	return Location(t, resp)
}

// Cookie returns the value of the jar's cookie name for u.
func (b *Browser) Cookie(t testing.TB, u, name string) (string, bool) {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b.Jar.Cookies(pu) {
		if c.Name == name {
			return c.Value, true
		}
	}
	return "", false
}

// MustStatus fails the test unless resp has status want.
func MustStatus(t testing.TB, resp *http.Response, body string, want int) {
	t.Helper()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d\n%s", resp.Request.Method, resp.Request.URL, resp.StatusCode, want, fmt.Sprint(body))
	}
}

// ProviderAbort plays a user who cancels at the provider's login page: it follows
// authURL to the dev login page, takes its cancel link, and returns the redirect that
// leaves the provider (the callback with error=access_denied).
func (b *Browser) ProviderAbort(t testing.TB, issuer, authURL string) string {
	t.Helper()
	next := authURL
	for hop := 0; hop < 20; hop++ {
		if !strings.HasPrefix(next, issuer+"/") {
			return next
		}
		resp, body := b.Get(t, next)
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			next = Location(t, resp)
		case resp.StatusCode == http.StatusOK && strings.Contains(body, `/abort"`):
			next = strings.TrimSuffix(resp.Request.URL.String(), "/") + "/abort"
		default:
			t.Fatalf("provider answered %s with %d: %s", next, resp.StatusCode, body)
		}
	}
	t.Fatalf("provider abort did not leave the provider after 20 hops")
	return ""
}
