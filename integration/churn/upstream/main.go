// Command upstream is the churn workload's upstream, a process of its own: it answers
// 200 to every request, and serves the JWT route's key set at /keys.
//
//	upstream -listen 127.0.0.1:9000 -jwks keys.json
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9000", "address to serve on")
	jwks := flag.String("jwks", "", "file holding the JSON Web Key Set served at /keys")
	flag.Parse()
	keys, err := os.ReadFile(*jwks)
	if err != nil {
		fmt.Fprintf(os.Stderr, "upstream: -jwks: %v\n", err)
		os.Exit(2)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(keys)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintf(os.Stderr, "upstream: %v\n", err)
		os.Exit(1)
	}
}
