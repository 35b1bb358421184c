// Package source is where the control plane's resources come from. A Source publishes
// Inputs: every resource it knows, in one stable order, each with its origin and a
// content hash, plus the problems met while reading them. Translation never learns
// which Source it is fed by, so a Kubernetes source plugs in beside Dir unchanged.
package source

import (
	"context"
	"strconv"
	"strings"
)

// Source publishes the complete set of resources whenever it changes.
//
// A Source never publishes an empty or partial Input because of a read failure: the
// first Input is published only once everything was read, and what cannot be read
// later keeps its last good version (and is reported in Input.Problems). Run returns
// when ctx ends, or with an error when the source cannot start.
type Source interface {
	Run(ctx context.Context, publish func(*Input)) error
}

// Input is one complete view of the resources. It is never modified once published:
// the Objects it points to are shared with every later stage.
type Input struct {
	// Source names where the resources come from (e.g. "dir /etc/gatehouse").
	Source string `json:"source"`
	// Resources are ordered by apiVersion, kind, namespace, name; a key appears once.
	Resources Resources `json:"resources"`
	// Problems are what could not be read; the last good versions of what they concern
	// are still in Resources.
	Problems []Problem `json:"problems,omitempty"`
}

// NewInput is an Input of rs, which must be in key order with each key once (it is
// kept: do not modify it afterwards).
func NewInput(source string, rs []Resource, problems []Problem) *Input {
	return &Input{Source: source, Resources: NewResources(rs), Problems: problems}
}

// Resource is one declarative resource.
type Resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Origin is where it was read from (a file for Dir).
	Origin string `json:"origin"`
	// Object is the decoded resource: *apiv1.VirtualService, *apiv1.Upstream,
	// *apiv1.AuthConfig, *apiv1.Settings or *apiv1.Secret. Nobody modifies it.
	Object any `json:"object"`
	// Hash identifies the content: equal hashes mean equal objects. It is keyed with a
	// per-process key, so it says nothing about a Secret's value.
	Hash string `json:"hash"`
}

// ID is "<namespace>.<name>".
func (r *Resource) ID() string { return r.Namespace + "." + r.Name }

// Key identifies a resource across versions: apiVersion, kind, namespace and name.
type Key struct {
	APIVersion, Kind, Namespace, Name string
}

// Key returns the resource's key.
func (r *Resource) Key() Key { return Key{r.APIVersion, r.Kind, r.Namespace, r.Name} }

// String is "<Kind> <namespace>.<name>", as resources are named in messages.
func (k Key) String() string { return k.Kind + " " + k.Namespace + "." + k.Name }

// Less orders keys by apiVersion, kind, namespace, name.
func (k Key) Less(o Key) bool { return k.Compare(o) < 0 }

// Compare orders keys by apiVersion, kind, namespace, name.
func (k Key) Compare(o Key) int {
	if c := strings.Compare(k.APIVersion, o.APIVersion); c != 0 {
		return c
	}
	if c := strings.Compare(k.Kind, o.Kind); c != 0 {
		return c
	}
	if c := strings.Compare(k.Namespace, o.Namespace); c != 0 {
		return c
	}
	return strings.Compare(k.Name, o.Name)
}

// Problem is something a Source could not read.
type Problem struct {
	// Origin is the file (or the directory) concerned.
	Origin string `json:"origin"`
	// Line is the line of Origin, when known.
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// String is "<origin>:<line>: <message>".
func (p Problem) String() string {
	if p.Line > 0 {
		return p.Origin + ":" + strconv.Itoa(p.Line) + ": " + p.Message
	}
	return p.Origin + ": " + p.Message
}
