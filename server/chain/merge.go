package chain

import "gatehouse.dev/gatehouse/pluginapi"

// merger accumulates the header changes of the allowing steps into one response, in
// the order the steps made them.
type merger struct {
	set, appended, respHeaders map[string]string
	removed                    []string
}

// apply records resp and makes its header changes visible to the next step.
func (m *merger) apply(req *pluginapi.AuthorizationRequest, resp *pluginapi.AuthorizationResponse) {
	if req.Headers == nil && (len(resp.RequestHeaders) > 0 || len(resp.AppendRequestHeaders) > 0) {
		req.Headers = make(map[string]string)
	}
	for _, k := range resp.RemoveRequestHeaders {
		delete(req.Headers, k)
		delete(m.set, k)
		delete(m.appended, k)
		m.removed = append(m.removed, k)
	}
	for k, v := range resp.RequestHeaders {
		req.Headers[k] = v
		m.set = put(m.set, k, v)
		delete(m.appended, k)
		m.unremove(k)
	}
	for k, v := range resp.AppendRequestHeaders {
		if old, ok := req.Headers[k]; ok && old != "" {
			req.Headers[k] = old + "," + v
		} else {
			req.Headers[k] = v
		}
		if old, ok := m.set[k]; ok {
			m.set[k] = old + "," + v
		} else if old, ok := m.appended[k]; ok {
			m.appended[k] = old + "," + v
		} else {
			m.appended = put(m.appended, k, v)
		}
		m.unremove(k)
	}
	for k, v := range resp.ResponseHeaders {
		m.respHeaders = put(m.respHeaders, k, v)
	}
}

func (m *merger) unremove(k string) {
	for i, r := range m.removed {
		if r == k {
			m.removed = append(m.removed[:i], m.removed[i+1:]...)
			return
		}
	}
}

func (m *merger) response() *pluginapi.AuthorizationResponse {
	return &pluginapi.AuthorizationResponse{
		Allowed:              true,
		RequestHeaders:       m.set,
		AppendRequestHeaders: m.appended,
		RemoveRequestHeaders: m.removed,
		ResponseHeaders:      m.respHeaders,
	}
}

func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = make(map[string]string, 2)
	}
	m[k] = v
	return m
}
