package source

import (
	"context"
	"fmt"
	"slices"
	"sort"
)

// Static publishes the resources of YAML documents held in memory once, then waits
// for ctx: the embedded examples of `gatehouse dev`. A document that does not decode
// is an error of Run, so a broken build of the examples fails at start.
type Static struct {
	// Name names the source in the Input (e.g. "embedded examples").
	Name string
	// Files are the YAML contents by origin (a file name, for messages).
	Files map[string][]byte
}

// Run publishes the one Input and returns when ctx ends.
func (s *Static) Run(ctx context.Context, publish func(*Input)) error {
	in, err := s.Input()
	if err != nil {
		return err
	}
	publish(in)
	<-ctx.Done()
	return nil
}

// Input decodes Files into one Input.
func (s *Static) Input() (*Input, error) {
	origins := make([]string, 0, len(s.Files))
	for o := range s.Files {
		origins = append(origins, o)
	}
	sort.Strings(origins)
	var all []Resource
	for _, o := range origins {
		rs, problems := Decode(s.Files[o], o)
		if len(problems) > 0 {
			return nil, fmt.Errorf("source %s: %s", s.Name, problems[0])
		}
		all = append(all, rs...)
	}
	slices.SortStableFunc(all, func(a, b Resource) int { return a.Key().Compare(b.Key()) })
	for i := 1; i < len(all); i++ {
		if all[i].Key() == all[i-1].Key() {
			return nil, fmt.Errorf("source %s: %s is defined in %s and in %s", s.Name,
				all[i].Key(), all[i-1].Origin, all[i].Origin)
		}
	}
	return NewInput(s.Name, all, nil), nil
}

// Mapped passes every Input of Source through Map before publishing it. Map must not
// modify the Input it is given (it is shared): it returns a new one.
type Mapped struct {
	Source Source
	Map    func(*Input) *Input
}

// Run runs Source, publishing what Map makes of each Input.
func (m *Mapped) Run(ctx context.Context, publish func(*Input)) error {
	return m.Source.Run(ctx, func(in *Input) { publish(m.Map(in)) })
}
