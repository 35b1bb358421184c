// Command devidp is a development identity provider for the jwt-rbac example: it makes
// an RSA key when it starts, serves its key set at /keys, and mints tokens at
// /token?sub=NAME&team=TEAM (valid for an hour). Never use it for anything real: anyone
// who reaches it gets a token.
//
//	go run ./examples/jwt-rbac/devidp [--listen 127.0.0.1:9100] [--issuer https://devidp.example]
package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/go-jose/go-jose/v4"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9100", "address to serve /keys and /token on")
	issuer := flag.String("issuer", "https://devidp.example", "the iss claim of the tokens")
	flag.Parse()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		log.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "dev"))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "dev", Algorithm: "RS256", Use: "sig"}}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	mux.HandleFunc("GET /token", func(w http.ResponseWriter, r *http.Request) {
		claims := map[string]any{"iss": *issuer, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
		for _, c := range []string{"sub", "team"} {
			if v := r.URL.Query().Get(c); v != "" {
				claims[c] = v
			}
		}
		payload, _ := json.Marshal(claims)
		jws, err := signer.Sign(payload)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		tok, _ := jws.CompactSerialize()
		fmt.Fprint(w, tok)
	})
	fmt.Fprintf(os.Stderr, "devidp: key set at http://%s/keys, tokens at http://%s/token?sub=alice&team=dev\n", *listen, *listen)
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
