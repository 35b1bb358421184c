package v1

import "fmt"

// Origin is where a resource of s was read from, "<file>:<line>", or "" when it was
// not read by Add (built in code). Messages about two resources that clash name both
// places with it.
func (s *Set) Origin(resource any) string {
	if s.origins == nil && len(s.documents) > 0 {
		s.origins = s.indexOrigins()
	}
	return s.origins[resource]
}

// docOrigin is where the resources one document added to a Set came from: those past
// the counts before it, up to the next document's.
type docOrigin struct {
	before [5]int // the Set's counts before the document
	source string
	line   int
}

// noteOrigins records source:line for the resources appended to s since counts were
// taken. The "<file>:<line>" of each is made only when Origin is first asked: the
// control plane's directory source decodes every file and never asks, so it pays for
// no map and no formatted string per file.
func (s *Set) noteOrigins(before [5]int, source string, line int) {
	if before == s.counts() {
		return
	}
	s.documents = append(s.documents, docOrigin{before: before, source: source, line: line})
	s.origins = nil
}

// indexOrigins is "<file>:<line>" by resource, for every resource a document added.
func (s *Set) indexOrigins() map[any]string {
	out := map[any]string{}
	for i, d := range s.documents {
		end := s.counts()
		if i+1 < len(s.documents) {
			end = s.documents[i+1].before
		}
		at := fmt.Sprintf("%s:%d", d.source, d.line)
		for _, r := range s.AuthConfigs[d.before[0]:end[0]] {
			out[r] = at
		}
		for _, r := range s.VirtualServices[d.before[1]:end[1]] {
			out[r] = at
		}
		for _, r := range s.Upstreams[d.before[2]:end[2]] {
			out[r] = at
		}
		for _, r := range s.Settings[d.before[3]:end[3]] {
			out[r] = at
		}
		for _, r := range s.Secrets[d.before[4]:end[4]] {
			out[r] = at
		}
	}
	return out
}

func (s *Set) counts() [5]int {
	return [5]int{len(s.AuthConfigs), len(s.VirtualServices), len(s.Upstreams), len(s.Settings), len(s.Secrets)}
}
