package devgateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// JWT failures, with the texts Envoy's jwt_authn answers them with (body of the 401).
var (
	errJwtMissing      = errors.New("Jwt is missing")
	errJwtVerification = errors.New("Jwt verification fails")
	errJwtExpired      = errors.New("Jwt is expired")
	errJwtNotYetValid  = errors.New("Jwt not yet valid")
	errJwtIssuer       = errors.New("Jwt issuer is not configured")
	errJwtBadFormat    = errors.New("Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections")
	errJwtAlg          = errors.New("Jwt header [alg] is not supported")
	errJwksKid         = errors.New("Jwks doesn't have key to match kid or alg from Jwt")
	errJwksFetch       = errors.New("Jwks remote fetch is failed")
)

// clockSkew is Envoy's default clock_skew_seconds.
const clockSkew = 60 * time.Second

// jwtAlgs are the algorithms accepted: Envoy's list without the symmetric ones (a
// remote key set is public) and never "none".
var jwtAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// jwtProvider is a jwt_authn provider the gateway serves.
type jwtProvider struct {
	name       string
	issuer     string
	headers    []tokenHeader
	keys       *jwksSet
	claims     []claimHeader
	payloadKey string // payload_in_metadata
	forward    bool
}

type tokenHeader struct{ name, prefix string }

type claimHeader struct{ claim, header string }

// jwtOutcome is what a verified token leaves: the payload for RBAC, under payloadKey.
type jwtOutcome struct {
	payloadKey string
	payload    map[string]any
}

// verifyJWT runs a requirement: any one provider verifying its token is enough. On
// success the claims are added as headers and the token removed (unless forward), as
// jwt_authn does; on failure the error is the text of the 401.
func verifyJWT(ctx context.Context, providers []*jwtProvider, r *http.Request) (*jwtOutcome, error) {
	var firstErr error
	for _, p := range providers {
		out, err := p.verify(ctx, r)
		if err == nil {
			return out, nil
		}
		if firstErr == nil || (errors.Is(firstErr, errJwtMissing) && !errors.Is(err, errJwtMissing)) {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = errJwtMissing
	}
	return nil, firstErr
}

func (p *jwtProvider) verify(ctx context.Context, r *http.Request) (*jwtOutcome, error) {
	token, from := "", ""
	for _, h := range p.headers {
		v := r.Header.Get(h.name)
		if v == "" || !strings.HasPrefix(v, h.prefix) {
			continue
		}
		token, from = strings.TrimSpace(v[len(h.prefix):]), h.name
		break
	}
	if token == "" {
		return nil, errJwtMissing
	}
	if strings.Count(token, ".") != 2 {
		return nil, errJwtBadFormat
	}
	jws, err := jose.ParseSigned(token, jwtAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, errJwtAlg
	}
	var claims map[string]any
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &claims); err != nil {
		return nil, errJwtBadFormat
	}
	// Issuer and time are checked before any key is fetched, as in Envoy.
	if p.issuer != "" {
		if iss, _ := claims["iss"].(string); iss != p.issuer {
			return nil, errJwtIssuer
		}
	}
	now := time.Now()
	if exp, ok := claims["exp"].(float64); ok && now.After(time.Unix(int64(exp), 0).Add(clockSkew)) {
		return nil, errJwtExpired
	}
	if nbf, ok := claims["nbf"].(float64); ok && now.Add(clockSkew).Before(time.Unix(int64(nbf), 0)) {
		return nil, errJwtNotYetValid
	}
	kid := jws.Signatures[0].Header.KeyID
	if err := p.checkSignature(ctx, jws, kid, false); err != nil {
		if !errors.Is(err, errJwksKid) {
			return nil, err
		}
		// A key the set lacks: the issuer may have rotated; fetch again (rate limited).
		if err := p.checkSignature(ctx, jws, kid, true); err != nil {
			return nil, err
		}
	}
	for _, c := range p.claims {
		if v, ok := claimString(claims, c.claim); ok {
			r.Header.Add(c.header, v)
		}
	}
	if !p.forward {
		r.Header.Del(from)
	}
	return &jwtOutcome{payloadKey: p.payloadKey, payload: claims}, nil
}

func (p *jwtProvider) checkSignature(ctx context.Context, jws *jose.JSONWebSignature, kid string, unknownKid bool) error {
	set, err := p.keys.keySet(ctx, unknownKid)
	if err != nil || set == nil {
		return errJwksFetch
	}
	alg := jws.Signatures[0].Header.Algorithm
	matched := false
	for _, k := range set.Keys {
		if (kid != "" && k.KeyID != kid) || (k.Algorithm != "" && k.Algorithm != alg) || !k.Valid() || !k.IsPublic() {
			continue
		}
		matched = true
		if _, err := jws.Verify(k.Key); err == nil {
			return nil
		}
	}
	if !matched {
		return errJwksKid
	}
	return errJwtVerification
}

// claimString renders a claim as jwt_authn's claim_to_headers does: strings as they
// are, numbers (integers without a fraction), booleans, objects and lists as base64 of
// their JSON. A dotted name reaches into nested objects. Empty values add no header.
func claimString(claims map[string]any, name string) (string, bool) {
	var v any = claims
	for _, seg := range strings.Split(name, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok = m[seg]; !ok {
			return "", false
		}
	}
	switch x := v.(type) {
	case string:
		return x, x != ""
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10), true
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err != nil {
			return "", false
		}
		return base64.StdEncoding.EncodeToString(b), true
	}
	return "", false
}
