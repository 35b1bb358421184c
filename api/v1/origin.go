package v1

import "fmt"

// Origin is where a resource of s was read from, "<file>:<line>", or "" when it was
// not read by Add (built in code). Messages about two resources that clash name both
// places with it.
func (s *Set) Origin(resource any) string { return s.Origins[resource] }

// noteOrigins records source:line for the resources appended to s since counts were
// taken.
func (s *Set) noteOrigins(before [5]int, source string, line int) {
	if s.Origins == nil {
		s.Origins = map[any]string{}
	}
	at := fmt.Sprintf("%s:%d", source, line)
	for _, r := range s.AuthConfigs[before[0]:] {
		s.Origins[r] = at
	}
	for _, r := range s.VirtualServices[before[1]:] {
		s.Origins[r] = at
	}
	for _, r := range s.Upstreams[before[2]:] {
		s.Origins[r] = at
	}
	for _, r := range s.Settings[before[3]:] {
		s.Origins[r] = at
	}
	for _, r := range s.Secrets[before[4]:] {
		s.Origins[r] = at
	}
}

func (s *Set) counts() [5]int {
	return [5]int{len(s.AuthConfigs), len(s.VirtualServices), len(s.Upstreams), len(s.Settings), len(s.Secrets)}
}
