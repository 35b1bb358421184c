package oidc

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
)

// errSealed is every failure to open a sealed value: tampered, truncated, another key.
// It says nothing more so it leaks nothing about the value.
var errSealed = errors.New("sealed value is not valid")

var b64 = base64.RawURLEncoding

// sealer encrypts and authenticates cookie values with AES-256-GCM. The additional
// data binds a value to its cookie name, so a flow cookie cannot pose as a session.
type sealer struct{ aead cipher.AEAD }

// newSealer derives a key for one purpose from the 32-byte master key.
func newSealer(master []byte, purpose string) (*sealer, error) {
	h := sha256.New()
	h.Write([]byte("gatehouse/oidc/" + purpose + "\x00"))
	h.Write(master)
	block, err := aes.NewCipher(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

// seal returns base64url(nonce || ciphertext) of plain, bound to ad.
func (s *sealer) seal(plain []byte, ad string) string {
	ns := s.aead.NonceSize()
	out := make([]byte, ns, ns+len(plain)+s.aead.Overhead())
	rand.Read(out[:ns])
	out = s.aead.Seal(out, out[:ns], plain, []byte(ad))
	return b64.EncodeToString(out)
}

// open reverses seal.
func (s *sealer) open(value, ad string) ([]byte, error) {
	raw, err := b64.DecodeString(value)
	ns := s.aead.NonceSize()
	if err != nil || len(raw) < ns+s.aead.Overhead() {
		return nil, errSealed
	}
	plain, err := s.aead.Open(raw[ns:ns], raw[:ns], raw[ns:], []byte(ad))
	if err != nil {
		return nil, errSealed
	}
	return plain, nil
}

// randomBytes returns n bytes from the system's secure source.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// randomString returns n random bytes, base64url encoded.
func randomString(n int) string { return b64.EncodeToString(randomBytes(n)) }

// digest is a short, stable, non-reversible name for a secret value.
func digest(label, v string) []byte {
	h := sha256.Sum256([]byte(label + "\x00" + v))
	return h[:]
}
