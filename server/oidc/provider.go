package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// metadata is the part of the provider's discovery document the step uses.
type metadata struct {
	Issuer                 string   `json:"issuer"`
	AuthorizationEndpoint  string   `json:"authorization_endpoint"`
	TokenEndpoint          string   `json:"token_endpoint"`
	JWKSURI                string   `json:"jwks_uri"`
	EndSessionEndpoint     string   `json:"end_session_endpoint"`
	RevocationEndpoint     string   `json:"revocation_endpoint"`
	SigningAlgs            []string `json:"id_token_signing_alg_values_supported"`
	ISSParameterSupported  bool     `json:"authorization_response_iss_parameter_supported"`
	CodeChallengeMethods   []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMetho []string `json:"token_endpoint_auth_methods_supported"`
}

// provider is what the step knows about the identity provider: discovery and keys,
// fetched when the config is built and refreshed in the background, never on the
// request path.
type provider struct {
	issuer string
	client *http.Client
	meta   atomic.Pointer[metadata]
	keys   atomic.Pointer[jose.JSONWebKeySet]
	// kick asks the refresher for an early run (an unknown key id was seen).
	kick chan struct{}
}

// discover fetches discovery and keys once; the config is rejected when this fails.
func discover(ctx context.Context, issuer string, client *http.Client) (*provider, error) {
	p := &provider{issuer: issuer, client: client, kick: make(chan struct{}, 1)}
	if err := p.refresh(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *provider) refresh(ctx context.Context) error {
	var m metadata
	if err := p.getJSON(ctx, strings.TrimSuffix(p.issuer, "/")+"/.well-known/openid-configuration", &m); err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	if m.Issuer != p.issuer {
		return fmt.Errorf("discovery: the provider calls itself %q, not %q; set issuerUrl to its issuer exactly", m.Issuer, p.issuer)
	}
	if m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" || m.JWKSURI == "" {
		return errors.New("discovery: authorization_endpoint, token_endpoint and jwks_uri are required")
	}
	if len(m.CodeChallengeMethods) > 0 && !contains(m.CodeChallengeMethods, "S256") {
		return errors.New("discovery: the provider does not support PKCE S256")
	}
	var ks jose.JSONWebKeySet
	if err := p.getJSON(ctx, m.JWKSURI, &ks); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if len(ks.Keys) == 0 {
		return errors.New("keys: the provider's key set is empty")
	}
	p.meta.Store(&m)
	p.keys.Store(&ks)
	return nil
}

func (p *provider) getJSON(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

// run refreshes discovery and keys every interval, or sooner when kicked, until ctx
// ends. A failed refresh keeps the last good values.
func (p *provider) run(ctx context.Context, every, timeout time.Duration, failed func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.kick:
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		if err := p.refresh(rctx); err != nil && ctx.Err() == nil {
			failed(err)
		}
		cancel()
	}
}

// VerifySignature implements go-oidc's KeySet from the keys in hand: a token signed by
// a key id the set does not hold fails (and asks for an early refresh) rather than
// fetching keys on the request path.
func (p *provider) VerifySignature(_ context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSigned(jwt, p.algs())
	if err != nil {
		return nil, fmt.Errorf("malformed token: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("token must carry exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	keys := p.keys.Load().Key(kid)
	if len(keys) == 0 {
		select {
		case p.kick <- struct{}{}:
		default:
		}
		return nil, fmt.Errorf("unknown key id %q", kid)
	}
	for _, k := range keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if payload, err := jws.Verify(k.Key); err == nil {
			return payload, nil
		}
	}
	return nil, errors.New("signature does not verify")
}

// algs are the asymmetric algorithms the provider announces (RS256 when it names none).
// "none" and HMAC algorithms are never accepted.
func (p *provider) algs() []jose.SignatureAlgorithm {
	var out []jose.SignatureAlgorithm
	for _, a := range p.meta.Load().SigningAlgs {
		switch alg := jose.SignatureAlgorithm(a); alg {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA:
			out = append(out, alg)
		}
	}
	if len(out) == 0 {
		out = []jose.SignatureAlgorithm{jose.RS256}
	}
	return out
}

func (p *provider) algNames() []string {
	var out []string
	for _, a := range p.algs() {
		out = append(out, string(a))
	}
	return out
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
