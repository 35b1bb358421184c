// Package snapshots is what the admin surfaces show of the control plane's stages:
// the /snapshots/* views with their envelope, and the one function every surface uses
// to turn a value into output with its secrets replaced (Redacted).
package snapshots

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// RedactedValue replaces every secret value in what the admin surfaces show.
const RedactedValue = "<redacted>"

// secretFields are the fields whose every leaf value is secret, in both the JSON
// (camelCase) and the proto (snake_case) spelling: OIDC client secrets and cookie keys
// in ExtAuthConfig, and TLS private keys, passwords, session ticket keys and generic
// secrets in Envoy's SDS secrets and TLS contexts.
var secretFields = map[string]bool{
	"clientSecret": true, "client_secret": true,
	"cookieEncryptionKey": true, "cookie_encryption_key": true,
	"privateKey": true, "private_key": true,
	"password":          true,
	"sessionTicketKeys": true, "session_ticket_keys": true,
	"genericSecret": true, "generic_secret": true,
	"hmacSecret": true, "hmac_secret": true,
	"tls.key": true,
}

// lastApplied is the annotation kubectl keeps a copy of the whole object in, data
// included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Redacted returns v as a generic JSON tree (maps, slices, strings, json.Number, bools,
// nil) with every secret value replaced by RedactedValue: the values of a Secret's data
// and stringData, and every leaf under a secret field (see secretFields). Keys and
// structure stay visible. v is marshalled with encoding/json; proto messages must be
// rendered with protojson first (as json.RawMessage). Every admin endpoint and CLI verb
// renders what it shows through this function, so there is one place to get it right.
func Redacted(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("snapshots: render: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("snapshots: render: %w", err)
	}
	return redact(tree), nil
}

func redact(v any) any {
	switch t := v.(type) {
	case map[string]any:
		secret := t["kind"] == "Secret"
		for k, child := range t {
			switch {
			case secretFields[k]:
				t[k] = hide(child)
			case secret && (k == "data" || k == "stringData"):
				t[k] = hide(child)
			case secret && k == "metadata":
				hideLastApplied(child)
				t[k] = redact(child)
			default:
				t[k] = redact(child)
			}
		}
		return t
	case []any:
		for i := range t {
			t[i] = redact(t[i])
		}
		return t
	}
	return v
}

// hide replaces every leaf of v, keeping map keys and list lengths.
func hide(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k := range t {
			t[k] = hide(t[k])
		}
		return t
	case []any:
		for i := range t {
			t[i] = hide(t[i])
		}
		return t
	case nil:
		return nil
	}
	return RedactedValue
}

func hideLastApplied(md any) {
	m, ok := md.(map[string]any)
	if !ok {
		return
	}
	if ann, ok := m["annotations"].(map[string]any); ok {
		if _, ok := ann[lastApplied]; ok {
			ann[lastApplied] = RedactedValue
		}
	}
}
