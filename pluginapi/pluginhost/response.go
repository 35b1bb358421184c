package pluginhost

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"gatehouse.dev/gatehouse/pluginapi"
)

// hopByHop reports the headers that describe one connection, not the request; a step
// that sets or removes them would change how Envoy talks to the client or the upstream
// (request smuggling, a hijacked upgrade). "host" is one too: Envoy routes by it. A
// switch, not a map: every header of every step is looked up, and a switch on the
// length compares few or no strings where a map hashes each name.
func hopByHop(lower string) bool {
	switch lower {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer", "host":
		return true
	}
	return false
}

// HeaderError is a header in a step's response that cannot be passed on. It names the
// header and why, never its value, which may be a credential.
type HeaderError struct {
	// Field is the response field the header came from, such as "RequestHeaders".
	Field string
	// Name is the header name as the step gave it.
	Name   string
	Reason string
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("invalid header in the response: %s %s: %s", e.Field, quoteName(e.Name), e.Reason)
}

// quoteName quotes a name for an error, escaping control bytes and cutting a long one.
func quoteName(name string) string {
	const most = 64
	if len(name) > most {
		return fmt.Sprintf("%q… (%d bytes)", name[:most], len(name))
	}
	return fmt.Sprintf("%q", name)
}

// CheckResponse reports the first header of resp that Envoy must not get (a
// *HeaderError), and a deny status that is not an HTTP error or success status. Only
// what will be used is checked: every header of an allow, the response headers, status
// and body of a deny. allowed are lower-case names exempt from the hop-by-hop rule
// (nil: none).
func CheckResponse(resp *pluginapi.AuthorizationResponse, allowed map[string]bool) error {
	if resp.Allowed {
		for k, v := range resp.RequestHeaders {
			if err := checkHeader("RequestHeaders", k, v, allowed); err != nil {
				return err
			}
		}
		for k, v := range resp.AppendRequestHeaders {
			if err := checkHeader("AppendRequestHeaders", k, v, allowed); err != nil {
				return err
			}
		}
		for _, k := range resp.RemoveRequestHeaders {
			if err := checkHeader("RemoveRequestHeaders", k, "", allowed); err != nil {
				return err
			}
		}
	} else if s := resp.StatusCode(); s < http.StatusOK || s > 599 {
		return fmt.Errorf("invalid deny status %d: it must be from 200 to 599", s)
	} else if !utf8.ValidString(resp.Body) {
		return errors.New("invalid deny body: it is not valid UTF-8, which ext_authz cannot carry back to Envoy")
	}
	for k, v := range resp.ResponseHeaders {
		if err := checkHeader("ResponseHeaders", k, v, allowed); err != nil {
			return err
		}
	}
	for k, vs := range resp.ResponseHeaderValues {
		for _, v := range vs {
			if err := checkHeader("ResponseHeaderValues", k, v, allowed); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkHeader(field, name, value string, allowed map[string]bool) error {
	bad := func(reason string) error { return &HeaderError{Field: field, Name: name, Reason: reason} }
	ok, upper := token(name)
	switch {
	case name == "":
		return bad("empty name")
	case name[0] == ':':
		return bad("pseudo-headers are Envoy's; a step cannot set or remove them")
	case !ok:
		return bad("the name is not an RFC 9110 token (letters, digits and !#$%&'*+-.^_`|~ only)")
	}
	lower := name
	if upper {
		lower = strings.ToLower(name)
	}
	if hopByHop(lower) && !allowed[lower] {
		return bad("a hop-by-hop or host header; a step cannot set or remove it unless the chain allows it")
	}
	at, ascii := scanValue(value)
	if at >= 0 {
		return bad(fmt.Sprintf("the value has a control byte (such as CR, LF or NUL) at offset %d", at))
	}
	if !ascii && !utf8.ValidString(value) {
		// HTTP allows such bytes (obs-text), but ext_authz carries values back to Envoy
		// in proto strings, which must be UTF-8: the answer could not be sent at all.
		return bad("the value is not valid UTF-8, which ext_authz cannot carry back to Envoy")
	}
	return nil
}

// scanValue returns the offset of the first control byte of v other than tab (-1 when
// there is none) and whether v is all ASCII. Values such as an ID token run to a
// kilobyte or more, so it looks at eight bytes at a time while they are all printable
// ASCII (0x20-0x7e), and byte by byte from the first word that is not.
func scanValue(v string) (int, bool) {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(v); i += 8 {
		w := uint64(v[i]) | uint64(v[i+1])<<8 | uint64(v[i+2])<<16 | uint64(v[i+3])<<24 |
			uint64(v[i+4])<<32 | uint64(v[i+5])<<40 | uint64(v[i+6])<<48 | uint64(v[i+7])<<56
		del := w ^ 0x7f*ones
		// A high bit set in: w (a byte >= 0x80), w-0x20 and not w (a byte < 0x20),
		// del-1 and not del (a byte == 0x7f).
		if (w|(w-0x20*ones)&^w|(del-ones)&^del)&highs != 0 {
			break
		}
	}
	return scanBytes(v, i)
}

// scanBytes is scanValue one byte at a time from offset i, the bytes before it being
// printable ASCII.
func scanBytes(v string, i int) (at int, ascii bool) {
	ascii = true
	for ; i < len(v); i++ {
		switch c := v[i]; {
		case c < 0x20 && c != '\t' || c == 0x7f:
			return i, ascii
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return -1, ascii
}

// tokenBytes are the bytes of an RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~.
var tokenBytes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()

// token reports whether s is an RFC 9110 token, and whether it has an upper-case
// letter (names are nearly always lower case already; one pass tells both).
func token(s string) (ok, upper bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !tokenBytes[c] {
			return false, upper
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	return true, upper
}
