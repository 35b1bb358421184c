package translate

import (
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// CookieKeySecretKey is the data key of the Secret session.cookieEncryptionKeyRef
// names: 32 bytes (in data, base64 as usual) or, in stringData, 64 hex digits or 32
// bytes of standard base64.
const CookieKeySecretKey = "cookie-encryption-key"

// oauth2Step validates an oauth2 step, reporting every problem with its field path,
// resolves its Secrets and returns the resolved step.
func oauth2Step(secrets SecretLookup, ac *apiv1.AuthConfig, o *apiv1.OAuth2, path string, errs *fieldErrors) *extauthv1.Step {
	c := o.OIDCAuthorizationCode
	if c == nil {
		errs.add(path, "oidcAuthorizationCode is required")
		return nil
	}
	path += ".oidcAuthorizationCode"
	before := len(*errs)
	out := &extauthv1.OidcAuthorizationCode{
		AppUrl:         c.AppURL,
		CallbackPath:   c.CallbackPath,
		ClientId:       c.ClientID,
		IssuerUrl:      c.IssuerURL,
		Scopes:         c.Scopes,
		LogoutPath:     c.LogoutPath,
		AfterLogoutUrl: c.AfterLogoutURL,
	}
	app := checkAppURL(c.AppURL, path+".appUrl", errs)
	checkPath(c.CallbackPath, path+".callbackPath", true, errs)
	checkPath(c.LogoutPath, path+".logoutPath", false, errs)
	if c.LogoutPath != "" && c.LogoutPath == c.CallbackPath {
		errs.add(path+".logoutPath", "must differ from callbackPath")
	}
	if c.AfterLogoutURL != "" {
		if u, err := url.Parse(c.AfterLogoutURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs.add(path+".afterLogoutUrl", "must be an absolute http or https URL")
		}
	}
	if c.ClientID == "" {
		errs.add(path+".clientId", "is required")
	}
	checkIssuer(c.IssuerURL, path+".issuerUrl", errs)
	for i, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\"\\") {
			errs.addf(path+".scopes["+strconv.Itoa(i)+"]", "%q is not a scope token", s)
		}
	}
	out.ClientSecret = clientSecret(secrets, ac, c.ClientSecretRef, path+".clientSecretRef", errs)
	out.Session = session(secrets, ac, c.Session, path+".session", errs)
	if h := c.Headers; h != nil {
		out.Headers = &extauthv1.OidcAuthorizationCode_Headers{IdTokenHeader: h.IDTokenHeader, AccessTokenHeader: h.AccessTokenHeader}
		checkHeaderName(h.IDTokenHeader, path+".headers.idTokenHeader", errs)
		checkHeaderName(h.AccessTokenHeader, path+".headers.accessTokenHeader", errs)
	}
	out.CookieOptions = cookieOptions(c.CookieOptions, app, path+".cookieOptions", errs)
	if c.PreExpiryBuffer != "" {
		d, err := time.ParseDuration(c.PreExpiryBuffer)
		if err != nil || d < 0 {
			errs.addf(path+".preExpiryBuffer", "%q is not a duration such as \"30s\"", c.PreExpiryBuffer)
		} else {
			out.PreExpiryBuffer = durationpb.New(d)
		}
	}
	if len(*errs) > before {
		return nil
	}
	return &extauthv1.Step{Kind: &extauthv1.Step_OidcAuthorizationCode{OidcAuthorizationCode: out}}
}

func checkAppURL(v, path string, errs *fieldErrors) *url.URL {
	u, err := url.Parse(v)
	switch {
	case v == "":
		errs.add(path, "is required")
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		errs.addf(path, "%q must be an absolute http or https URL such as https://app.example.com", v)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		errs.add(path, "must not hold userinfo, a query or a fragment")
	default:
		return u
	}
	return nil
}

func checkPath(v, path string, required bool, errs *fieldErrors) {
	switch {
	case v == "" && required:
		errs.add(path, "is required")
	case v == "":
	case !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") || strings.ContainsAny(v, "?#\\ "):
		errs.addf(path, "%q must be a path starting with / (no query, fragment or spaces)", v)
	}
}

// checkIssuer requires https, or http on a loopback address for local development.
func checkIssuer(v, path string, errs *fieldErrors) {
	u, err := url.Parse(v)
	switch {
	case v == "":
		errs.add(path, "is required")
	case err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "":
		errs.addf(path, "%q must be an absolute URL without query or fragment", v)
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(u.Hostname()):
	default:
		errs.addf(path, "%q must use https (http is accepted only on a loopback address)", v)
	}
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func checkHeaderName(v, path string, errs *fieldErrors) {
	if v == "" {
		return
	}
	for _, r := range v {
		if !(r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			errs.addf(path, "%q is not a header name", v)
			return
		}
	}
	switch strings.ToLower(v) {
	case "cookie", "host", "authorization", "content-length", "transfer-encoding":
		errs.addf(path, "%q is a header the step must not overwrite", v)
	}
}

func clientSecret(secrets SecretLookup, ac *apiv1.AuthConfig, ref *apiv1.Ref, path string, errs *fieldErrors) string {
	if ref == nil || ref.Name == "" {
		errs.add(path, "is required: name the Secret of type "+apiv1.OAuthSecretType+" that holds the client secret")
		return ""
	}
	id := ref.ID(ac.Metadata.Namespace)
	sec := secrets(id)
	switch {
	case sec == nil:
		errs.addf(path, "Secret %s not found", id)
	case sec.Type != apiv1.OAuthSecretType:
		errs.addf(path, "Secret %s has type %q; want %q (gatehouse create secret oauth makes one)", id, sec.Type, apiv1.OAuthSecretType)
	default:
		v, ok := sec.Value(apiv1.OAuthSecretKey)
		if !ok || len(v) == 0 {
			errs.addf(path, "Secret %s has no data key %q", id, apiv1.OAuthSecretKey)
			return ""
		}
		return string(v)
	}
	return ""
}

func session(secrets SecretLookup, ac *apiv1.AuthConfig, s *apiv1.OIDCSession, path string, errs *fieldErrors) *extauthv1.OidcAuthorizationCode_Session {
	if s == nil {
		return nil
	}
	out := &extauthv1.OidcAuthorizationCode_Session{FailOnFetchFailure: s.FailOnFetchFailure}
	if r := s.Redis; r != nil {
		out.Redis = &extauthv1.OidcAuthorizationCode_Session_Redis{CookieName: r.CookieName, Host: r.Options.Host, Hosts: r.Options.Hosts}
		if r.CookieName != "" && !validCookieName(r.CookieName) {
			errs.addf(path+".redis.cookieName", "%q is not a cookie name (letters, digits, - and _)", r.CookieName)
		}
		if r.Options.Host == "" && len(r.Options.Hosts) == 0 {
			errs.add(path+".redis.options.host", "is required (host:port)")
		}
		if r.Options.Host != "" {
			checkHostPort(r.Options.Host, path+".redis.options.host", errs)
		}
		for i, h := range r.Options.Hosts {
			checkHostPort(h, path+".redis.options.hosts["+strconv.Itoa(i)+"]", errs)
		}
	}
	if ref := s.CookieEncryptionRef; ref != nil {
		out.CookieEncryptionKey = cookieKey(secrets, ref.ID(ac.Metadata.Namespace), path+".cookieEncryptionKeyRef", errs)
	}
	return out
}

func cookieKey(secrets SecretLookup, id, path string, errs *fieldErrors) []byte {
	sec := secrets(id)
	if sec == nil {
		errs.addf(path, "Secret %s not found", id)
		return nil
	}
	if v, ok := sec.StringData[CookieKeySecretKey]; ok {
		if k, err := hex.DecodeString(v); err == nil && len(k) == 32 {
			return k
		}
		if k, err := base64.StdEncoding.DecodeString(v); err == nil && len(k) == 32 {
			return k
		}
		errs.addf(path, "Secret %s: stringData %q must be 64 hex digits or 32 bytes in base64 (openssl rand -hex 32)", id, CookieKeySecretKey)
		return nil
	}
	k, ok := sec.Data[CookieKeySecretKey]
	if !ok || len(k) != 32 {
		errs.addf(path, "Secret %s: data key %q must hold exactly 32 bytes (openssl rand -base64 32)", id, CookieKeySecretKey)
		return nil
	}
	return k
}

func checkHostPort(v, path string, errs *fieldErrors) {
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" || port == "" || !digits(port) {
		errs.addf(path, "%q must be host:port", v)
	}
}

func cookieOptions(c *apiv1.CookieOptions, app *url.URL, path string, errs *fieldErrors) *extauthv1.OidcAuthorizationCode_CookieOptions {
	if c == nil {
		return nil
	}
	out := &extauthv1.OidcAuthorizationCode_CookieOptions{Path: c.Path, Domain: c.Domain}
	if c.MaxAge != nil {
		if *c.MaxAge < 0 {
			errs.add(path+".maxAge", "must not be negative (seconds; 0 or unset for a browser-session cookie)")
		}
		out.MaxAgeSeconds = *c.MaxAge
	}
	if c.Secure != nil {
		out.Secure = proto.Bool(*c.Secure)
	}
	if c.HTTPOnly != nil {
		out.HttpOnly = proto.Bool(*c.HTTPOnly)
	}
	switch strings.ToLower(c.SameSite) {
	case "", "lax", "strict":
		out.SameSite = strings.ToLower(c.SameSite)
	case "none":
		out.SameSite = "none"
		if c.Secure != nil && !*c.Secure || c.Secure == nil && app != nil && app.Scheme != "https" {
			errs.add(path+".sameSite", "None needs secure cookies (browsers drop SameSite=None cookies without Secure)")
		}
	default:
		errs.addf(path+".sameSite", "%q must be Lax, Strict or None", c.SameSite)
	}
	if c.Path != "" && !strings.HasPrefix(c.Path, "/") {
		errs.addf(path+".path", "%q must start with /", c.Path)
	}
	if d := strings.TrimPrefix(c.Domain, "."); c.Domain != "" && app != nil && app.Hostname() != d && !strings.HasSuffix(app.Hostname(), "."+d) {
		errs.addf(path+".domain", "%q does not cover the appUrl host %q; the browser would drop the cookie", c.Domain, app.Hostname())
	}
	return out
}

func validCookieName(v string) bool {
	for _, r := range v {
		if !(r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			return false
		}
	}
	return v != ""
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
