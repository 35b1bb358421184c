package translate

import (
	"fmt"
	"strings"
)

// fieldErrors collects every problem of one resource so users fix them in one pass.
type fieldErrors []string

func (e *fieldErrors) add(path, msg string) { *e = append(*e, path+": "+msg) }

func (e *fieldErrors) addf(path, format string, args ...any) {
	e.add(path, fmt.Sprintf(format, args...))
}

// err returns nil when nothing was collected, else one error naming the resource.
func (e fieldErrors) err(resource string) error {
	if len(e) == 0 {
		return nil
	}
	return &ResourceError{Resource: resource, Problems: e}
}

// ResourceError lists every problem found in one resource.
type ResourceError struct {
	Resource string
	Problems []string
}

func (e *ResourceError) Error() string {
	return e.Resource + ": " + strings.Join(e.Problems, "; ")
}
