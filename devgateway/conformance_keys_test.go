package devgateway_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// signKind is how a test token is signed.
type signKind int

const (
	signGood       signKind = iota // by the published key, with its kid
	signForged                     // by another key, claiming the published kid
	signUnknownKid                 // by a key the key set does not have (yet)
	signNone                       // alg "none", no signature
)

// idp is the run's identity provider: RSA keys generated per run and a real HTTP
// server for the key set, which publishes the keys in published.
type idp struct {
	keys      map[string]*rsa.PrivateKey // by kid
	mu        sync.Mutex
	published []string
	fetches   atomic.Int64
	srv       *httptest.Server
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	p := &idp{keys: map[string]*rsa.PrivateKey{}, published: []string{"k1"}}
	for _, kid := range []string{"k1", "k2", "forger"} {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		p.keys[kid] = k
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/keys" {
			http.NotFound(w, r)
			return
		}
		p.fetches.Add(1)
		p.mu.Lock()
		var set jose.JSONWebKeySet
		for _, kid := range p.published {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &p.keys[kid].PublicKey, KeyID: kid, Algorithm: "RS256", Use: "sig"})
		}
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *idp) publish(kids ...string) {
	p.mu.Lock()
	p.published = kids
	p.mu.Unlock()
}

// mint returns a token with claims, signed as kind says.
func (p *idp) mint(t *testing.T, kind signKind, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	if kind == signNone {
		enc := base64.RawURLEncoding
		return enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc.EncodeToString(payload) + "."
	}
	key, kid := p.keys["k1"], "k1"
	switch kind {
	case signForged:
		key = p.keys["forger"]
	case signUnknownKid:
		key, kid = p.keys["k2"], "k2"
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
