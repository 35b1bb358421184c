package state

import (
	"bytes"
	"encoding/json"
	"sort"
	"sync"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// Memory is a state file's resources: a source.Memory. Resources are decoded when first
// asked for (most never are: only those that became invalid meanwhile). Safe for
// concurrent use.
type Memory struct {
	byKey    map[source.Key]*line
	byOrigin map[string][]*line // in key order

	mu      sync.Mutex
	decoded map[source.Key]*source.Resource
}

func newMemory(lines []line) *Memory {
	m := &Memory{byKey: make(map[source.Key]*line, len(lines)), byOrigin: map[string][]*line{}, decoded: map[source.Key]*source.Resource{}}
	for i := range lines {
		l := &lines[i]
		m.byKey[l.key()] = l
		m.byOrigin[l.Origin] = append(m.byOrigin[l.Origin], l)
	}
	for _, ls := range m.byOrigin {
		sort.Slice(ls, func(i, j int) bool { return ls[i].key().Less(ls[j].key()) })
	}
	return m
}

func (l *line) key() source.Key {
	return source.Key{APIVersion: l.APIVersion, Kind: l.Kind, Namespace: l.Namespace, Name: l.Name}
}

// Len is the number of resources remembered.
func (m *Memory) Len() int { return len(m.byKey) }

// Origin is where the remembered version of k was read from.
func (m *Memory) Origin(k source.Key) (string, bool) {
	l, ok := m.byKey[k]
	if !ok {
		return "", false
	}
	return l.Origin, true
}

// Get is the remembered version of k. A version that no longer decodes (the decoder
// became stricter) is not remembered.
func (m *Memory) Get(k source.Key) (*source.Resource, bool) {
	l, ok := m.byKey[k]
	if !ok {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.decoded[k]; ok {
		return r, r != nil
	}
	var r *source.Resource
	if rs, problems := source.Decode(l.Object, l.Origin); len(problems) == 0 && len(rs) == 1 && rs[0].Key() == k {
		r = &rs[0]
	}
	m.decoded[k] = r
	return r, r != nil
}

// Same says whether the remembered version of r's key is r's content: the state file
// holds each object as json.Marshal wrote it, so equal content is equal bytes.
func (m *Memory) Same(r *source.Resource) bool {
	l, ok := m.byKey[r.Key()]
	if !ok {
		return false
	}
	b, err := json.Marshal(r.Object)
	return err == nil && bytes.Equal(b, l.Object)
}

// From is every remembered resource read from origin, in key order.
func (m *Memory) From(origin string) []source.Resource {
	var out []source.Resource
	for _, l := range m.byOrigin[origin] {
		if r, ok := m.Get(l.key()); ok {
			out = append(out, *r)
		}
	}
	return out
}

var _ source.Memory = (*Memory)(nil)
