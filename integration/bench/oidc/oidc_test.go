package oidc

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestTokenExpiry(t *testing.T) {
	jwt := func(payload string) string {
		return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".c2ln"
	}
	for _, tc := range []struct {
		name, token string
		want        time.Time
		wantErr     bool
	}{
		{name: "exp claim", token: jwt(`{"sub":"bench","exp":1795000000}`), want: time.Unix(1795000000, 0)},
		{name: "no exp claim", token: jwt(`{"sub":"bench"}`), wantErr: true},
		{name: "not JSON", token: jwt(`exp`), wantErr: true},
		{name: "not a JWT", token: "opaque-token", wantErr: true},
		{name: "payload not base64url", token: "a.%%%.c", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tokenExpiry(tc.token)
			if (err != nil) != tc.wantErr {
				t.Fatalf("tokenExpiry() error = %v, wantErr %v", err, tc.wantErr)
			}
			if !got.Equal(tc.want) {
				t.Errorf("tokenExpiry() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRefreshNote(t *testing.T) {
	end := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		expiry    time.Time
		refreshed []string
		want      string
	}{
		{name: "refresh due long after the load", expiry: end.Add(time.Hour), want: "**No refresh during the load.**"},
		{name: "refresh due inside the pre-expiry buffer", expiry: end.Add(20 * time.Second), want: "**A refresh was due during the load**"},
		{name: "a session was refreshed", expiry: end.Add(time.Hour), refreshed: []string{"redis"}, want: "**Sessions were refreshed during the load** (redis:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &result{Expiry: tc.expiry, PreExpiry: 30 * time.Second, LoadEnd: end, Refreshed: tc.refreshed}
			if got := o.refreshNote(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("refreshNote() = %q, want it to start with %q", got, tc.want)
			}
		})
	}
}
