// Package snapshots is what the admin surfaces show of the control plane's stages:
// the /snapshots/* views with their envelope, and the one function every surface uses
// to turn a value into output with its secrets replaced (Redacted).
package snapshots

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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

// triggers are what JSON must contain for a rule to apply: a secret field's name, or
// the word Secret (the kind of a Secret object). JSON without any of them is returned
// as it is, so redacting a large snapshot costs one scan of its bytes plus the work on
// the few parts that hold secrets.
var triggers = func() [][]byte {
	out := [][]byte{[]byte(`"Secret"`)}
	for f := range secretFields {
		out = append(out, []byte(`"`+f+`"`))
	}
	return out
}()

// lastApplied is the annotation kubectl keeps a copy of the whole object in, data
// included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Redacted returns v as compact JSON with every secret value replaced by
// RedactedValue: the values of a Secret's data and stringData (and kubectl's
// last-applied copy of it), and every leaf under a secret field (see secretFields).
// Keys and structure stay visible. v is marshalled with encoding/json; proto messages
// must be rendered with protojson first (as json.RawMessage). Every admin endpoint and
// CLI verb renders what it shows through this function, so there is one place to get
// it right.
func Redacted(v any) (json.RawMessage, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, fmt.Errorf("snapshots: render: %w", err)
	}
	out, err := redactRaw(b)
	if err != nil {
		return nil, fmt.Errorf("snapshots: render: %w", err)
	}
	return out, nil
}

func hasTrigger(b []byte) bool {
	for _, t := range triggers {
		if bytes.Contains(b, t) {
			return true
		}
	}
	return false
}

// redactRaw redacts compact JSON, descending only into the parts that hold a trigger.
func redactRaw(b []byte) ([]byte, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || !hasTrigger(b) {
		return b, nil
	}
	switch b[0] {
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		secret := bytes.Equal(bytes.TrimSpace(m["kind"]), []byte(`"Secret"`))
		for k, child := range m {
			var err error
			switch {
			case secretFields[k], secret && (k == "data" || k == "stringData"):
				m[k], err = hideRaw(child)
			case secret && k == "metadata":
				m[k], err = hideLastApplied(child)
			default:
				m[k], err = redactRaw(child)
			}
			if err != nil {
				return nil, err
			}
		}
		return objectJSON(m), nil
	case '[':
		var l []json.RawMessage
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, err
		}
		var out bytes.Buffer
		out.WriteByte('[')
		for i, child := range l {
			c, err := redactRaw(child)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(c)
		}
		out.WriteByte(']')
		return out.Bytes(), nil
	}
	return b, nil
}

// objectJSON writes m with its keys in order.
func objectJSON(m map[string]json.RawMessage) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out bytes.Buffer
	out.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			out.WriteByte(',')
		}
		kb, _ := marshal(k)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(m[k])
	}
	out.WriteByte('}')
	return out.Bytes()
}

// hideRaw replaces every leaf of b, keeping map keys and list lengths.
func hideRaw(b []byte) ([]byte, error) {
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, err
	}
	return marshal(hide(tree))
}

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

// hideLastApplied redacts kubectl's copy of a Secret in its metadata.
func hideLastApplied(b []byte) ([]byte, error) {
	var md map[string]any
	if err := json.Unmarshal(b, &md); err != nil {
		return nil, err
	}
	if ann, ok := md["annotations"].(map[string]any); ok {
		if _, ok := ann[lastApplied]; ok {
			ann[lastApplied] = RedactedValue
		}
	}
	out, err := marshal(md)
	if err != nil {
		return nil, err
	}
	return redactRaw(out)
}

// marshal is json.Marshal without escaping "<", ">" and "&", so "<redacted>" reads as
// it is.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
