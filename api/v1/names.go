package v1

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// nameErrors checks a document's metadata.name and metadata.namespace as Kubernetes
// does: a name is a DNS-1123 subdomain, a namespace a DNS-1123 label. So a name can
// never climb out of a folder ("../x"), and since a namespace holds no ".", the
// config_id "<namespace>.<name>" of one AuthConfig is never another's.
func nameErrors(d document, id string) []lineError {
	_, md := lookup(d.root, "metadata")
	var errs []lineError
	for _, f := range []struct {
		field string
		check func(string) []string
	}{{"name", validation.IsDNS1123Subdomain}, {"namespace", validation.IsDNS1123Label}} {
		_, n := lookup(md, f.field)
		v, ok := stringValue(n)
		if !ok || v == "" {
			continue // missing (the default namespace), or not a string: reported elsewhere
		}
		if msgs := f.check(v); len(msgs) > 0 {
			errs = append(errs, lineError{line: n.Line, err: fmt.Errorf("%s: metadata.%s: %q is not a valid %s: %s",
				id, f.field, v, f.field, strings.Join(msgs, "; "))})
		}
	}
	return errs
}

// CheckNames says what is wrong with a resource's name and namespace, as decoding
// would: a name is a DNS-1123 subdomain, a namespace a DNS-1123 label.
func CheckNames(name, namespace string) error {
	var errs []error
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("name %q is not valid: %s", name, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Label(namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("namespace %q is not valid: %s", namespace, strings.Join(msgs, "; ")))
	}
	return errors.Join(errs...)
}

// kinds are the kinds a resource file may hold, for suggestions.
var kinds = map[string]reflect.Type{KindAuthConfig: nil, KindVirtualService: nil, KindUpstream: nil, KindSettings: nil, KindSecret: nil}

// unknownKind says a document's kind is none Gatehouse reads, suggesting the closest.
func unknownKind(tm TypeMeta) error {
	msg := fmt.Sprintf("kind %q (apiVersion %q) is not one Gatehouse reads (AuthConfig, VirtualService, Upstream, Settings, Secret)", tm.Kind, tm.APIVersion)
	if s := suggest(tm.Kind, kinds); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return errors.New(msg)
}
