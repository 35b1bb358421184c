package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// DefaultNamespace is given to resources whose metadata names none.
const DefaultNamespace = "default"

// Set is every resource read from one source, in file and document order.
type Set struct {
	AuthConfigs     []*AuthConfig
	VirtualServices []*VirtualService
	Upstreams       []*Upstream
	Settings        []*Settings
	Secrets         []*Secret

	// documents are where Add read each resource from (see Origin); origins indexes
	// them by resource once asked.
	documents []docOrigin
	origins   map[any]string
}

// Secret returns the Secret with the given id ("<namespace>.<name>").
func (s *Set) Secret(id string) *Secret {
	for _, sec := range s.Secrets {
		if sec.Metadata.ID() == id {
			return sec
		}
	}
	return nil
}

// Load reads a YAML file, or every *.yaml and *.yml file of a folder (not recursive,
// in name order). Every bad document is reported, not just the first.
func Load(path string) (*Set, error) {
	files, err := yamlFiles(path)
	if err != nil {
		return nil, err
	}
	set := &Set{}
	var errs []error
	for _, f := range files {
		data, err := ReadFile(f, nil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := set.Add(data, f); err != nil {
			errs = append(errs, err)
		}
	}
	return set, errors.Join(errs...)
}

func yamlFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("resources: %w", err)
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("resources: %w", err)
	}
	var files []string
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml") && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}

// Add decodes multi-document YAML into s; source names the input in errors.
func (s *Set) Add(data []byte, source string) error {
	if err := checkSize(source, int64(len(data))); err != nil {
		return err
	}
	docs, p, deep := parseFast(data)
	if deep > 0 {
		return fmt.Errorf("%s:%d: %w", source, deep, errTooDeep)
	}
	if docs != nil {
		defer p.release() // what addDocument keeps holds no node
		var errs []error
		for _, doc := range docs {
			errs = append(errs, s.addDocument(doc, source, true)...)
		}
		return errors.Join(errs...)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var errs []error
	for doc := 1; ; doc++ {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, syntaxError(data, source, doc, err))
			break
		}
		if deep, line := tooDeep(&node); deep {
			errs = append(errs, fmt.Errorf("%s:%d: %w", source, line, errTooDeep))
			break
		}
		errs = append(errs, s.addDocument(&node, source, false)...)
	}
	return errors.Join(errs...)
}

// addDocument adds the resource of one parsed document to s, or returns its problems.
// fast says fastDocuments parsed it.
func (s *Set) addDocument(doc *yaml.Node, source string, fast bool) []error {
	var errs []error
	before := s.counts()
	for _, e := range s.addNode(doc, fast && !duplicateKeys(doc)) {
		errs = append(errs, fmt.Errorf("%s:%d: %w", source, e.line, e.err))
	}
	s.noteOrigins(before, source, contentLine(doc))
	return errs
}

// contentLine is the line a document's content starts on. The document node's own
// line is the "---" before it for every document but the first.
func contentLine(doc *yaml.Node) int {
	if len(doc.Content) > 0 {
		return doc.Content[0].Line
	}
	return doc.Line
}

// lineError is a problem of a document and the line it is on.
type lineError struct {
	line int
	err  error
}

// addNode decodes one document into s. Everything wrong with the fields of a known
// resource is returned, each at its own line; anything else at the document's line.
// direct says the document may be decoded from its nodes (build): a fast-path document
// without duplicate keys, which the generic decoding could not refuse.
func (s *Set) addNode(doc *yaml.Node, direct bool) []lineError {
	line := contentLine(doc)
	at := func(err error) []lineError { return []lineError{{line: line, err: err}} }
	var generic any
	if !direct {
		if err := doc.Decode(&generic); err != nil {
			return at(err)
		}
		if generic == nil {
			return nil // an empty document, as after a trailing "---"
		}
	}
	d := document{root: resolve(doc.Content[0]), generic: generic, line: line}
	tm, err := typeMeta(d.root)
	if err != nil {
		return at(fmt.Errorf("not a resource: %w", err))
	}
	switch {
	case tm.Kind == KindAuthConfig && tm.APIVersion == AuthConfigAPIVersion:
		if over := authConfigLimits(d.root); len(over) > 0 {
			id, _, _ := identify(d, tm.Kind)
			var errs []lineError
			for _, fe := range over {
				errs = append(errs, lineError{line: fe.line, err: fmt.Errorf("%s: %w", id, fe)})
			}
			return errs
		}
		return decodeInto(d, TypeMeta{APIVersion: AuthConfigAPIVersion, Kind: KindAuthConfig}, &s.AuthConfigs)
	case tm.Kind == KindVirtualService && tm.APIVersion == VirtualServiceAPIVersion:
		return decodeInto(d, TypeMeta{APIVersion: VirtualServiceAPIVersion, Kind: KindVirtualService}, &s.VirtualServices)
	case tm.Kind == KindUpstream && tm.APIVersion == CoreAPIVersion:
		return decodeInto(d, TypeMeta{APIVersion: CoreAPIVersion, Kind: KindUpstream}, &s.Upstreams)
	case tm.Kind == KindSettings && tm.APIVersion == CoreAPIVersion:
		return decodeInto(d, TypeMeta{APIVersion: CoreAPIVersion, Kind: KindSettings}, &s.Settings)
	case tm.Kind == KindSecret && tm.APIVersion == SecretAPIVersion:
		return decodeInto(d, TypeMeta{APIVersion: SecretAPIVersion, Kind: KindSecret}, &s.Secrets)
	case tm.Kind == "" || tm.APIVersion == "":
		return at(errors.New("apiVersion and kind are required"))
	case knownKind(tm.Kind):
		return at(fmt.Errorf("%s: apiVersion %q is not served; use %q", tm.Kind, tm.APIVersion, apiVersionOf(tm.Kind)))
	default:
		return at(unknownKind(tm))
	}
}

// document is one YAML document, as nodes (for lines and field paths) and as the
// generic value encoding/json decodes from (nil when it may be built from the nodes).
type document struct {
	root    *yaml.Node
	generic any
	line    int
}

// typeMeta reads apiVersion and kind; a missing one is left empty.
func typeMeta(root *yaml.Node) (TypeMeta, error) {
	if root.Kind != yaml.MappingNode {
		return TypeMeta{}, fmt.Errorf("want a mapping with apiVersion and kind, got %s", describe(root))
	}
	var tm TypeMeta
	for _, f := range []struct {
		key string
		dst *string
	}{{"apiVersion", &tm.APIVersion}, {"kind", &tm.Kind}} {
		if _, v := lookup(root, f.key); !isNull(v) {
			s, ok := stringValue(v)
			if !ok {
				return TypeMeta{}, fmt.Errorf("%s: want a string, got %s", f.key, describe(v))
			}
			*f.dst = s
		}
	}
	return tm, nil
}

// object is a pointer to a resource type.
type object[T any] interface {
	*T
	Meta() *Metadata
	types() *TypeMeta
}

// decodeInto checks every field of d against T, then decodes it with encoding/json
// (strict, as a last guard) and appends it to list. Problems are reported as
// "<kind> <namespace>.<name>: <field path>: <problem>", all of them, in line order.
// tm is d's apiVersion and kind, as constants: the decoded resource holds them rather
// than the strings read (one copy for every resource, instead of one each).
func decodeInto[T any, P object[T]](d document, tm TypeMeta, list *[]*T) []lineError {
	kind := tm.Kind
	id, named, mdLine := identify(d, kind)
	var errs []lineError
	for _, fe := range checkFields(d.root, reflect.TypeFor[T]()) {
		errs = append(errs, lineError{line: fe.line, err: fmt.Errorf("%s: %w", id, fe)})
	}
	if !named {
		errs = append(errs, lineError{line: mdLine, err: fmt.Errorf("%s: metadata.name is required", kind)})
	}
	errs = append(errs, nameErrors(d, id)...)
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].line < errs[j].line })
		return errs
	}
	v := P(new(T))
	if d.generic != nil || !build(d.root, reflect.ValueOf(v).Elem()) {
		v = P(new(T)) // not what build may have set
		if err := decodeJSON(d, v); err != nil {
			return []lineError{{line: d.line, err: fmt.Errorf("%s: %w", id, err)}}
		}
	}
	if md := v.Meta(); md.Namespace == "" {
		md.Namespace = DefaultNamespace
	}
	*v.types() = tm
	*list = append(*list, (*T)(v))
	return nil
}

// decodeJSON decodes d into v (a pointer) through JSON, strictly.
func decodeJSON(d document, v any) error {
	generic := d.generic
	if generic == nil {
		if err := d.root.Decode(&generic); err != nil {
			return err
		}
	}
	raw, err := json.Marshal(generic)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// identify names a resource in errors ("AuthConfig ns.name", or the kind alone when
// it has no usable name), says whether metadata.name is given, and returns the line a
// missing name is reported at: that of metadata, or of the document.
func identify(d document, kind string) (id string, named bool, mdLine int) {
	mdKey, md := lookup(d.root, "metadata")
	mdLine = d.line
	if mdKey != nil {
		mdLine = mdKey.Line
	}
	_, nameNode := lookup(md, "name")
	// A name that is there but not a string is a field error, not a missing name.
	name, isString := stringValue(nameNode)
	named = !isNull(nameNode) && (!isString || name != "")
	if name == "" {
		return kind, named, mdLine
	}
	ns := DefaultNamespace
	if _, nsNode := lookup(md, "namespace"); nsNode != nil {
		if v, ok := stringValue(nsNode); ok && v != "" {
			ns = v
		}
	}
	return kind + " " + ns + "." + name, named, mdLine
}

func knownKind(kind string) bool { return apiVersionOf(kind) != "" }

func apiVersionOf(kind string) string {
	switch kind {
	case KindAuthConfig:
		return AuthConfigAPIVersion
	case KindVirtualService:
		return VirtualServiceAPIVersion
	case KindUpstream, KindSettings:
		return CoreAPIVersion
	case KindSecret:
		return SecretAPIVersion
	}
	return ""
}
