package translate_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

const oidcSecrets = `
apiVersion: v1
kind: Secret
metadata: {name: oauth, namespace: gloo-system}
type: extauth.gatehouse.dev/oauth
data: {client-secret: c2VjcmV0LXZhbHVl}
---
apiVersion: v1
kind: Secret
metadata: {name: cookie-key, namespace: gloo-system}
type: Opaque
stringData: {cookie-encryption-key: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"}
---
apiVersion: v1
kind: Secret
metadata: {name: wrong-type, namespace: gloo-system}
type: Opaque
data: {client-secret: c2VjcmV0LXZhbHVl}
`

func oidcAuthConfig(step string) string {
	return `
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: login, namespace: gloo-system}
spec:
  configs:
  - oauth2:
      oidcAuthorizationCode:
` + step
}

func TestOIDCStepTranslation(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	tests := []struct {
		name string
		step string
		want *extauthv1.OidcAuthorizationCode
	}{{
		name: "every field",
		step: `
        appUrl: https://app.example.com
        callbackPath: /callback
        clientId: gatehouse
        clientSecretRef: {name: oauth, namespace: gloo-system}
        issuerUrl: https://idp.example.com/realms/x
        scopes: [email]
        logoutPath: /logout
        afterLogoutUrl: https://app.example.com/bye
        session:
          failOnFetchFailure: true
          redis: {cookieName: sid, options: {host: "redis:6379"}}
          cookieEncryptionKeyRef: {name: cookie-key}
        headers: {idTokenHeader: x-id-token, accessTokenHeader: x-access-token}
        cookieOptions: {maxAge: 3600, secure: true, httpOnly: true, sameSite: Strict, path: /, domain: example.com}
        preExpiryBuffer: 1m
`,
		want: &extauthv1.OidcAuthorizationCode{
			AppUrl: "https://app.example.com", CallbackPath: "/callback", ClientId: "gatehouse",
			ClientSecret: "secret-value", IssuerUrl: "https://idp.example.com/realms/x", Scopes: []string{"email"},
			LogoutPath: "/logout", AfterLogoutUrl: "https://app.example.com/bye",
			Session: &extauthv1.OidcAuthorizationCode_Session{
				FailOnFetchFailure:  true,
				Redis:               &extauthv1.OidcAuthorizationCode_Session_Redis{CookieName: "sid", Host: "redis:6379"},
				CookieEncryptionKey: key,
			},
			Headers:         &extauthv1.OidcAuthorizationCode_Headers{IdTokenHeader: "x-id-token", AccessTokenHeader: "x-access-token"},
			CookieOptions:   &extauthv1.OidcAuthorizationCode_CookieOptions{MaxAgeSeconds: 3600, Secure: proto.Bool(true), HttpOnly: proto.Bool(true), SameSite: "strict", Path: "/", Domain: "example.com"},
			PreExpiryBuffer: durationpb.New(time.Minute),
		},
	}, {
		name: "minimal, http issuer on loopback, secret in the AuthConfig's namespace",
		step: `
        appUrl: http://127.0.0.1:8080
        callbackPath: /callback
        clientId: gatehouse
        clientSecretRef: {name: oauth}
        issuerUrl: http://127.0.0.1:9000
`,
		want: &extauthv1.OidcAuthorizationCode{
			AppUrl: "http://127.0.0.1:8080", CallbackPath: "/callback", ClientId: "gatehouse",
			ClientSecret: "secret-value", IssuerUrl: "http://127.0.0.1:9000",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := translateOne(t, tt.step)
			if res.Err != nil {
				t.Fatalf("unexpected error: %v", res.Err)
			}
			got := res.Config.GetSteps()[0].GetOidcAuthorizationCode()
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("step (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOIDCStepValidation(t *testing.T) {
	tests := []struct {
		name string
		step string
		want []string
	}{{
		name: "everything wrong at once",
		step: `
        appUrl: app.example.com/x
        callbackPath: callback
        clientId: ""
        clientSecretRef: {name: wrong-type}
        issuerUrl: http://idp.example.com
        scopes: ["a b"]
        logoutPath: logout
        session:
          redis: {cookieName: "bad name", options: {host: "redis"}}
          cookieEncryptionKeyRef: {name: oauth}
        headers: {idTokenHeader: "x id"}
        cookieOptions: {maxAge: -1, sameSite: Sometimes, path: x}
        preExpiryBuffer: soon
`,
		want: []string{
			`.appUrl: "app.example.com/x" must be an absolute http or https URL such as https://app.example.com`,
			`.callbackPath: "callback" must be a path starting with / (no query, fragment or spaces)`,
			`.logoutPath: "logout" must be a path starting with / (no query, fragment or spaces)`,
			`.clientId: is required`,
			`.issuerUrl: "http://idp.example.com" must use https (http is accepted only on a loopback address)`,
			`.scopes[0]: "a b" is not a scope token`,
			`.clientSecretRef: Secret gloo-system.wrong-type has type "Opaque"; want "extauth.gatehouse.dev/oauth" (gatehouse create secret oauth makes one)`,
			`.session.redis.cookieName: "bad name" is not a cookie name (letters, digits, - and _)`,
			`.session.redis.options.host: "redis" must be host:port`,
			`.session.cookieEncryptionKeyRef: Secret gloo-system.oauth: data key "cookie-encryption-key" must hold exactly 32 bytes (openssl rand -base64 32)`,
			`.headers.idTokenHeader: "x id" is not a header name`,
			`.cookieOptions.maxAge: must not be negative (seconds; 0 or unset for a browser-session cookie)`,
			`.cookieOptions.sameSite: "Sometimes" must be Lax, Strict or None`,
			`.cookieOptions.path: "x" must start with /`,
			`.preExpiryBuffer: "soon" is not a duration such as "30s"`,
		},
	}, {
		name: "missing secret and required fields",
		step: `
        appUrl: ""
        callbackPath: ""
        clientId: c
        clientSecretRef: {name: absent}
        issuerUrl: ""
`,
		want: []string{
			`.appUrl: is required`,
			`.callbackPath: is required`,
			`.issuerUrl: is required`,
			`.clientSecretRef: Secret gloo-system.absent not found`,
		},
	}, {
		name: "no secret ref, same logout and callback path, SameSite None without Secure",
		step: `
        appUrl: http://127.0.0.1:8080
        callbackPath: /cb
        logoutPath: /cb
        clientId: c
        issuerUrl: https://idp.example.com
        session: {redis: {options: {}}}
        cookieOptions: {sameSite: None, domain: other.example}
`,
		want: []string{
			`.logoutPath: must differ from callbackPath`,
			`.clientSecretRef: is required: name the Secret of type extauth.gatehouse.dev/oauth that holds the client secret`,
			`.session.redis.options.host: is required (host:port)`,
			`.cookieOptions.sameSite: None needs secure cookies (browsers drop SameSite=None cookies without Secure)`,
			`.cookieOptions.domain: "other.example" does not cover the appUrl host "127.0.0.1"; the browser would drop the cookie`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := translateOne(t, tt.step)
			var re *translate.ResourceError
			if !errors.As(res.Err, &re) {
				t.Fatalf("want a ResourceError, got %v", res.Err)
			}
			const prefix = "spec.configs[0].oauth2.oidcAuthorizationCode"
			var got []string
			for _, p := range re.Problems {
				got = append(got, strings.TrimPrefix(p, prefix))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if strings.Contains(res.Err.Error(), "secret-value") {
				t.Errorf("the error shows the client secret: %v", res.Err)
			}
		})
	}
}

func translateOne(t *testing.T, step string) translate.AuthConfigResult {
	t.Helper()
	set := &apiv1.Set{}
	if err := set.Add([]byte(oidcSecrets+"---"+oidcAuthConfig(step)), "test.yaml"); err != nil {
		t.Fatal(err)
	}
	res := translate.ExtAuth(set)
	if len(res) != 1 {
		t.Fatalf("%d results", len(res))
	}
	return res[0]
}
