package chain

import (
	"strings"

	"gatehouse.dev/gatehouse/pluginapi"
)

// merger accumulates the header changes of the allowing steps into one response, in
// the order the steps made them.
type merger struct {
	set, appended, respHeaders map[string]string
	respValues                 map[string][]string
	removed                    []string
}

// apply records resp and makes its header changes visible to the next step. Names
// are lower-cased, as req.Headers' keys are, whatever case the plugin used.
func (m *merger) apply(req *pluginapi.AuthorizationRequest, resp *pluginapi.AuthorizationResponse) {
	if req.Headers == nil && (len(resp.RequestHeaders) > 0 || len(resp.AppendRequestHeaders) > 0) {
		req.Headers = make(map[string]string)
	}
	for _, k := range resp.RemoveRequestHeaders {
		k = lower(k)
		delete(req.Headers, k)
		delete(m.set, k)
		delete(m.appended, k)
		if !m.isRemoved(k) {
			m.removed = append(m.removed, k)
		}
	}
	for k, v := range resp.RequestHeaders {
		k = lower(k)
		req.Headers[k] = v
		m.set = put(m.set, k, v)
		delete(m.appended, k)
		m.unremove(k)
	}
	for k, v := range resp.AppendRequestHeaders {
		k = lower(k)
		if old, ok := req.Headers[k]; ok && old != "" {
			req.Headers[k] = old + "," + v
		} else {
			req.Headers[k] = v
		}
		switch old, ok := m.set[k]; {
		case ok:
			m.set[k] = old + "," + v
		case m.isRemoved(k):
			// The upstream must not get the original value back: after a remove, an
			// append is a set.
			m.set = put(m.set, k, v)
			m.unremove(k)
		default:
			if old, ok := m.appended[k]; ok {
				m.appended[k] = old + "," + v
			} else {
				m.appended = put(m.appended, k, v)
			}
		}
	}
	for k, v := range resp.ResponseHeaders {
		m.respHeaders = put(m.respHeaders, lower(k), v)
	}
	for k, vs := range resp.ResponseHeaderValues {
		if m.respValues == nil {
			m.respValues = make(map[string][]string, len(resp.ResponseHeaderValues))
		}
		k = lower(k)
		m.respValues[k] = append(m.respValues[k], vs...)
	}
}

// adopt reports whether resp, the allow of a chain's last step, can be the chain's
// answer as it is: nothing was merged before it, and applying it to an empty merger
// would only copy it (every name lower case, nothing removed or appended, whose
// interplay with sets the merger resolves). It saves a Check the copies.
func (m *merger) adopt(resp *pluginapi.AuthorizationResponse) bool {
	if len(m.set) > 0 || len(m.appended) > 0 || len(m.respHeaders) > 0 || len(m.respValues) > 0 || len(m.removed) > 0 ||
		len(resp.RemoveRequestHeaders) > 0 || len(resp.AppendRequestHeaders) > 0 {
		return false
	}
	for k := range resp.RequestHeaders {
		if !isLower(k) {
			return false
		}
	}
	for k := range resp.ResponseHeaders {
		if !isLower(k) {
			return false
		}
	}
	for k := range resp.ResponseHeaderValues {
		if !isLower(k) {
			return false
		}
	}
	return true
}

// adoptInto makes an adopted response's sets visible in req.Headers, as apply would
// (adopt allows nothing but lower-case sets).
func adoptInto(req *pluginapi.AuthorizationRequest, resp *pluginapi.AuthorizationResponse) {
	if len(resp.RequestHeaders) == 0 {
		return
	}
	if req.Headers == nil {
		req.Headers = make(map[string]string, len(resp.RequestHeaders))
	}
	for k, v := range resp.RequestHeaders {
		req.Headers[k] = v
	}
}

// lower is strings.ToLower with a cheaper path for names already lower case, as
// nearly every name a plugin sets is.
func lower(s string) string {
	if isLower(s) {
		return s
	}
	return strings.ToLower(s)
}

// isLower reports whether s has no upper-case ASCII letter.
func isLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

func (m *merger) isRemoved(k string) bool {
	for _, r := range m.removed {
		if r == k {
			return true
		}
	}
	return false
}

func (m *merger) unremove(k string) {
	for i, r := range m.removed {
		if r == k {
			m.removed = append(m.removed[:i], m.removed[i+1:]...)
			return
		}
	}
}

// into makes r the merged allow; r shares the merger's maps until reset.
func (m *merger) into(r *pluginapi.AuthorizationResponse) {
	*r = pluginapi.AuthorizationResponse{Allowed: true}
	if len(m.set) > 0 {
		r.RequestHeaders = m.set
	}
	if len(m.appended) > 0 {
		r.AppendRequestHeaders = m.appended
	}
	r.RemoveRequestHeaders = m.removed
	if len(m.respHeaders) > 0 {
		r.ResponseHeaders = m.respHeaders
	}
	if len(m.respValues) > 0 {
		r.ResponseHeaderValues = m.respValues
	}
}

// reset empties m for another run, keeping its maps' storage. removed is dropped, not
// reused: the server's answer keeps that slice as it is (HeadersToRemove) until gRPC
// has sent it, after the outcome was released.
func (m *merger) reset() {
	clear(m.set)
	clear(m.appended)
	clear(m.respHeaders)
	clear(m.respValues)
	m.removed = nil
}

func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = make(map[string]string, 2)
	}
	m[k] = v
	return m
}
