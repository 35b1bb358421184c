package source

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"regexp"
	"strconv"
	"strings"
	"sync"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// hashKey keys every content hash, so the hash of a Secret cannot be used to guess its
// value offline. Hashes are only compared inside one process.
var hashKey = func() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic("source: no randomness for the hash key: " + err.Error())
	}
	return k
}()

// Hash returns the content hash of a decoded resource (what Resource.Hash holds).
func Hash(apiVersion, kind string, obj any) string {
	b, err := json.Marshal(obj) // map keys are sorted, so equal objects marshal equally
	if err != nil {
		// The objects are decoded from JSON-compatible YAML; they always marshal.
		panic("source: hash: " + err.Error())
	}
	return hashBytes(apiVersion, kind, b)
}

// hashBytes is the keyed hash of b, the text of one resource of apiVersion and kind.
func hashBytes(apiVersion, kind string, b []byte) string {
	m := hashers.Get().(hash.Hash)
	defer hashers.Put(m)
	m.Reset()
	m.Write([]byte(apiVersion + "\x00" + kind + "\x00"))
	m.Write(b)
	var sum [sha256.Size]byte
	return hex.EncodeToString(m.Sum(sum[:0])[:16])
}

// hashers are keyed HMACs to reuse: keying one costs more than hashing a resource.
var hashers = sync.Pool{New: func() any { return hmac.New(sha256.New, hashKey) }}

// Decode reads the resources of one YAML file (several documents allowed). origin
// names the file in Resource.Origin and in problems. A file with any problem yields
// its problems and no resources: the caller keeps that file's last good resources
// rather than serving part of a file being edited.
func Decode(data []byte, origin string) ([]Resource, []Problem) {
	set := &apiv1.Set{}
	if err := set.Add(data, origin); err != nil {
		return nil, problems(err, origin)
	}
	// A file of one resource, as most are, is hashed as its text: the object is
	// decoded from nothing else, so equal text means an equal object, and hashing the
	// bytes costs a fraction of marshaling the object to JSON first. An edit that changes only the text (a comment, the
	// layout) is then a change, which validation and translation find to be the same
	// Envoy resources as before: nothing is pushed. A file of several resources hashes
	// each one's JSON, as the Kubernetes source does.
	single := len(set.AuthConfigs)+len(set.VirtualServices)+len(set.Upstreams)+len(set.Settings)+len(set.Secrets) == 1
	var out []Resource
	add := func(apiVersion, kind string, md *apiv1.Metadata, obj any) {
		h := ""
		if single {
			h = hashBytes(apiVersion, kind, data)
		} else {
			h = Hash(apiVersion, kind, obj)
		}
		out = append(out, Resource{
			APIVersion: apiVersion, Kind: kind, Namespace: md.Namespace, Name: md.Name,
			Origin: origin, Object: obj, Hash: h,
		})
	}
	for _, r := range set.AuthConfigs {
		add(apiv1.AuthConfigAPIVersion, apiv1.KindAuthConfig, &r.Metadata, r)
	}
	for _, r := range set.VirtualServices {
		add(apiv1.VirtualServiceAPIVersion, apiv1.KindVirtualService, &r.Metadata, r)
	}
	for _, r := range set.Upstreams {
		add(apiv1.CoreAPIVersion, apiv1.KindUpstream, &r.Metadata, r)
	}
	for _, r := range set.Settings {
		add(apiv1.CoreAPIVersion, apiv1.KindSettings, &r.Metadata, r)
	}
	for _, r := range set.Secrets {
		add(apiv1.SecretAPIVersion, apiv1.KindSecret, &r.Metadata, r)
	}
	return out, nil
}

var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// problems splits apiv1's joined decode errors ("<origin>:<line>: <message>", or
// "<origin>: document <n>: yaml: line <l>: <message>") into Problems.
func problems(err error, origin string) []Problem {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []Problem
	for _, e := range errs {
		msg := e.Error()
		p := Problem{Origin: origin, Message: msg}
		if rest, ok := strings.CutPrefix(msg, origin+":"); ok {
			p.Message = strings.TrimSpace(rest)
			if n, after, ok := strings.Cut(rest, ":"); ok {
				if line, err := strconv.Atoi(n); err == nil {
					p.Line, p.Message = line, strings.TrimSpace(after)
				}
			}
		}
		if p.Line == 0 {
			if m := yamlLine.FindStringSubmatch(p.Message); m != nil {
				p.Line, _ = strconv.Atoi(m[1])
			}
		}
		out = append(out, p)
	}
	return out
}
