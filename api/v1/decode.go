package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	// Skipped counts documents of kinds this package does not know.
	Skipped int
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
		data, err := os.ReadFile(f)
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
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var errs []error
	for doc := 1; ; doc++ {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d: %w", source, doc, err))
			break
		}
		if err := s.addNode(&node); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", source, contentLine(&node), err))
		}
	}
	return errors.Join(errs...)
}

// contentLine is the line a document's content starts on. The document node's own
// line is the "---" before it for every document but the first.
func contentLine(doc *yaml.Node) int {
	if len(doc.Content) > 0 {
		return doc.Content[0].Line
	}
	return doc.Line
}

func (s *Set) addNode(node *yaml.Node) error {
	var generic any
	if err := node.Decode(&generic); err != nil {
		return err
	}
	if generic == nil {
		return nil // an empty document, as after a trailing "---"
	}
	raw, err := json.Marshal(generic)
	if err != nil {
		return err
	}
	var tm TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return fmt.Errorf("not a resource: %w", err)
	}
	switch {
	case tm.Kind == KindAuthConfig && tm.APIVersion == AuthConfigAPIVersion:
		return decodeInto(raw, tm.Kind, &s.AuthConfigs)
	case tm.Kind == KindVirtualService && tm.APIVersion == VirtualServiceAPIVersion:
		return decodeInto(raw, tm.Kind, &s.VirtualServices)
	case tm.Kind == KindUpstream && tm.APIVersion == CoreAPIVersion:
		return decodeInto(raw, tm.Kind, &s.Upstreams)
	case tm.Kind == KindSettings && tm.APIVersion == CoreAPIVersion:
		return decodeInto(raw, tm.Kind, &s.Settings)
	case tm.Kind == KindSecret && tm.APIVersion == SecretAPIVersion:
		return decodeInto(raw, tm.Kind, &s.Secrets)
	case tm.Kind == "" || tm.APIVersion == "":
		return errors.New("apiVersion and kind are required")
	case knownKind(tm.Kind):
		return fmt.Errorf("%s: apiVersion %q is not served; use %q", tm.Kind, tm.APIVersion, apiVersionOf(tm.Kind))
	default:
		s.Skipped++
		return nil
	}
}

// object is a pointer to a resource type.
type object[T any] interface {
	*T
	Meta() *Metadata
}

func decodeInto[T any, P object[T]](raw []byte, kind string, list *[]*T) error {
	v := P(new(T))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	md := v.Meta()
	if md.Name == "" {
		return fmt.Errorf("%s: metadata.name is required", kind)
	}
	if md.Namespace == "" {
		md.Namespace = DefaultNamespace
	}
	*list = append(*list, (*T)(v))
	return nil
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
