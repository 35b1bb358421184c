package devgateway

import (
	"net/http"
	"regexp"
	"strings"
)

// extractRule is one header_to_metadata request rule: the header's first value,
// rewritten by the regex (replace every match with the substitution), goes to dynamic
// metadata ns/key when not empty.
type extractRule struct {
	header  string
	ns, key string
	re      *regexp.Regexp // nil: the value as it is
	subst   string         // Go's template form ($1), from Envoy's (\1)
}

// rewrite applies an Envoy regex_value_rewrite: every non-overlapping match of re in
// value replaced by subst, as RE2's GlobalReplace does.
func rewrite(re *regexp.Regexp, subst, value string) string {
	return re.ReplaceAllString(value, subst)
}

// goSubstitution turns an RE2 rewrite string (\0 to \9 name groups, \\ is a backslash)
// into the form of regexp.Expand; ok is false for any other backslash escape, which
// RE2 refuses too.
func goSubstitution(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$':
			b.WriteString("$$")
		case c != '\\':
			b.WriteByte(c)
		case i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			b.WriteString("${" + string(s[i+1]) + "}")
			i++
		case i+1 < len(s) && s[i+1] == '\\':
			b.WriteByte('\\')
			i++
		default:
			return "", false
		}
	}
	return b.String(), true
}

// dynMetadata is a request's dynamic metadata: namespace → key → value.
type dynMetadata map[string]map[string]any

func (d dynMetadata) set(ns, key string, v any) {
	if d[ns] == nil {
		d[ns] = map[string]any{}
	}
	d[ns][key] = v
}

func runExtract(rules []extractRule, r *http.Request, md dynMetadata) {
	for _, x := range rules {
		vs := r.Header.Values(x.header)
		if len(vs) == 0 {
			continue
		}
		v := vs[0]
		if x.re != nil {
			v = rewrite(x.re, x.subst, v)
		}
		if v != "" {
			md.set(x.ns, x.key, v)
		}
	}
}

// luaStage is the data of Gatehouse's fixed early-stage Lua script for one route; the
// gateway does in Go what that script does.
type luaStage struct {
	remove  []string
	headers []luaHeader
}

type luaHeader struct {
	name  string
	parts []luaPart
}

type luaPart struct {
	text  string
	value string // a key in luaValuesNamespace; "" for text
}

// luaValuesNamespace is where the script reads extracted values (header_to_metadata's
// output).
const luaValuesNamespace = "gatehouse.transformation"

func runLua(s *luaStage, r *http.Request, md dynMetadata) {
	for _, h := range s.remove {
		r.Header.Del(h)
	}
	values := md[luaValuesNamespace]
	for _, h := range s.headers {
		var b strings.Builder
		for _, p := range h.parts {
			if p.value == "" {
				b.WriteString(p.text)
				continue
			}
			if v, ok := values[p.value].(string); ok {
				b.WriteString(v)
			}
		}
		r.Header.Set(h.name, b.String())
	}
}
