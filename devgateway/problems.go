package devgateway

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// problems collects everything wrong with one resource, each with its field path, so a
// NACK names every problem at once.
type problems []string

func (p *problems) addf(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	*p = append(*p, msg)
}

// only refuses every field set in m that is not in known. The gateway implements a
// subset of Envoy; a field it would ignore could change what a request is allowed to do,
// so it is refused rather than dropped.
func (p *problems) only(m proto.Message, path string, known ...string) {
	var unknown []string
	m.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		if !slices.Contains(known, string(fd.Name())) {
			unknown = append(unknown, string(fd.Name()))
		}
		return true
	})
	slices.Sort(unknown)
	for _, f := range unknown {
		p.addf(join(path, f), "not supported by the dev gateway")
	}
}

func (p *problems) err(what string) error {
	if len(*p) == 0 {
		return nil
	}
	errs := make([]error, len(*p))
	for i, s := range *p {
		errs[i] = errors.New(what + ": " + s)
	}
	return errors.Join(errs...)
}

// join appends field to a field path.
func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}
