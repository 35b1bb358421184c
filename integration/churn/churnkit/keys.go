package churnkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// signingKey is the JWT route's key: its public half is the key set the upstream
// serves, its private half signs the one token the workload sends.
type signingKey struct {
	jwks  []byte
	token string
}

func newSigningKey() (signingKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return signingKey{}, err
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "churn", Algorithm: string(jose.ES256), Use: "sig"}}}
	jwks, err := json.Marshal(set)
	if err != nil {
		return signingKey{}, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "churn"))
	if err != nil {
		return signingKey{}, err
	}
	claims, err := json.Marshal(map[string]any{"iss": Issuer, "sub": "churn", "exp": time.Now().Add(24 * time.Hour).Unix()})
	if err != nil {
		return signingKey{}, err
	}
	jws, err := signer.Sign(claims)
	if err != nil {
		return signingKey{}, err
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		return signingKey{}, err
	}
	return signingKey{jwks: jwks, token: token}, nil
}
