package oidc

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
)

// Defaults for fields an AuthConfig leaves empty.
const (
	DefaultCookieName      = "gatehouse_session"
	DefaultPreExpiryBuffer = 30 * time.Second
	// flowTTL bounds how long a login may take between the redirect and the callback.
	flowTTL = 10 * time.Minute
	// clockSkew is how far the provider's clock may run ahead of ours for token expiry.
	clockSkew = 30 * time.Second
	// maxCookieBytes is the size browsers reliably accept for one cookie.
	maxCookieBytes = 4000
)

// settings is the validated, defaulted form of one OidcAuthorizationCode config.
type settings struct {
	appURL          *url.URL
	appOrigin       string // scheme://host of appURL
	callbackPath    string
	redirectURL     string // appOrigin + callbackPath, as registered with the provider
	logoutPath      string
	afterLogoutURL  string
	clientID        string
	clientSecret    string
	issuer          string
	scopes          []string
	idTokenHeader   string
	accessHeader    string
	cookieName      string
	cookie          cookieAttrs
	preExpiry       time.Duration
	failOnFetch     bool
	redisAddrs      []string
	cookieKey       []byte
	configuredKey   bool
	flowCookiePrefx string
}

// cookieAttrs are the attributes every cookie the step sets carries.
type cookieAttrs struct {
	maxAge   int
	secure   bool
	httpOnly bool
	sameSite http.SameSite
	path     string
	domain   string
}

func newSettings(cfg *extauthv1.OidcAuthorizationCode) (*settings, error) {
	var errs []error
	s := &settings{
		callbackPath:   cfg.GetCallbackPath(),
		logoutPath:     cfg.GetLogoutPath(),
		afterLogoutURL: cfg.GetAfterLogoutUrl(),
		clientID:       cfg.GetClientId(),
		clientSecret:   cfg.GetClientSecret(),
		issuer:         cfg.GetIssuerUrl(),
		idTokenHeader:  strings.ToLower(cfg.GetHeaders().GetIdTokenHeader()),
		accessHeader:   strings.ToLower(cfg.GetHeaders().GetAccessTokenHeader()),
		cookieName:     DefaultCookieName,
		preExpiry:      DefaultPreExpiryBuffer,
		failOnFetch:    cfg.GetSession().GetFailOnFetchFailure(),
		cookieKey:      cfg.GetSession().GetCookieEncryptionKey(),
	}
	u, err := url.Parse(cfg.GetAppUrl())
	if err != nil || u.Scheme == "" || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		errs = append(errs, errors.New("appUrl: must be an absolute http or https URL"))
	} else {
		s.appURL = u
		s.appOrigin = u.Scheme + "://" + u.Host
	}
	if !strings.HasPrefix(s.callbackPath, "/") {
		errs = append(errs, errors.New("callbackPath: must start with /"))
	}
	if s.logoutPath != "" && !strings.HasPrefix(s.logoutPath, "/") {
		errs = append(errs, errors.New("logoutPath: must start with /"))
	}
	if s.clientID == "" {
		errs = append(errs, errors.New("clientId: is required"))
	}
	if s.issuer == "" {
		errs = append(errs, errors.New("issuerUrl: is required"))
	}
	if len(s.cookieKey) != 0 && len(s.cookieKey) != 32 {
		errs = append(errs, fmt.Errorf("session.cookieEncryptionKey: must be 32 bytes, not %d", len(s.cookieKey)))
	}
	s.configuredKey = len(s.cookieKey) == 32
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.redirectURL = s.appOrigin + s.callbackPath
	if s.afterLogoutURL == "" {
		s.afterLogoutURL = s.appURL.String()
	}
	s.scopes = scopes(cfg.GetScopes())
	if r := cfg.GetSession().GetRedis(); r != nil {
		if r.GetCookieName() != "" {
			s.cookieName = r.GetCookieName()
		}
		if r.GetHost() != "" {
			s.redisAddrs = append(s.redisAddrs, r.GetHost())
		}
		s.redisAddrs = append(s.redisAddrs, r.GetHosts()...)
	}
	if d := cfg.GetPreExpiryBuffer(); d != nil {
		s.preExpiry = d.AsDuration()
	}
	s.flowCookiePrefx = s.cookieName + "_flow_"
	s.cookie = cookieOptions(cfg.GetCookieOptions(), s.appURL)
	return s, nil
}

// scopes is openid followed by the configured scopes, without duplicates.
func scopes(extra []string) []string {
	out := []string{"openid"}
	for _, sc := range extra {
		dup := false
		for _, have := range out {
			dup = dup || have == sc
		}
		if !dup && sc != "" {
			out = append(out, sc)
		}
	}
	return out
}

func cookieOptions(o *extauthv1.OidcAuthorizationCode_CookieOptions, app *url.URL) cookieAttrs {
	c := cookieAttrs{
		maxAge:   int(o.GetMaxAgeSeconds()),
		secure:   app.Scheme == "https",
		httpOnly: true,
		sameSite: http.SameSiteLaxMode,
		path:     "/",
		domain:   o.GetDomain(),
	}
	if o != nil && o.Secure != nil {
		c.secure = o.GetSecure()
	}
	if o != nil && o.HttpOnly != nil {
		c.httpOnly = o.GetHttpOnly()
	}
	switch strings.ToLower(o.GetSameSite()) {
	case "strict":
		c.sameSite = http.SameSiteStrictMode
	case "none":
		c.sameSite = http.SameSiteNoneMode
	}
	if o.GetPath() != "" {
		c.path = o.GetPath()
	}
	return c
}
