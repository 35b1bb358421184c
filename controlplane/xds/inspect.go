package xds

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
)

// inspect checks one resource before it is published: it is of its type, named as it
// is keyed, passes ValidateAll, and so does every message packed in an Any inside it.
// It returns the resources it references, for the consistency check.
func inspect(typeURL, name string, res types.Resource) ([]key, error) {
	if res == nil {
		return nil, errors.New("nil resource")
	}
	if got := "type.googleapis.com/" + string(res.ProtoReflect().Descriptor().FullName()); got != typeURL {
		return nil, fmt.Errorf("is a %s, listed under %s", got, typeURL)
	}
	w := &walker{}
	if typeURL == VirtualHostType {
		// Named "<route configuration>/<virtual host>": it belongs to that route
		// configuration, which must be served beside it.
		rc, vh, ok := SplitVirtualHostName(name)
		if !ok || rc == "" || vh == "" {
			return nil, fmt.Errorf("is not named %q", "<route configuration>/<virtual host>")
		}
		w.refs = append(w.refs, key{RouteType, rc})
	}
	if got := resourceName(res); got != name {
		return nil, fmt.Errorf("is named %q inside, listed as %q", got, name)
	}
	full, err := expandMessage(res) // routes_compact.go
	if err != nil {
		return nil, err
	}
	if err := validate(full); err != nil {
		return nil, err
	}
	w.message("", full.ProtoReflect())
	return w.refs, joinErrs(w.errs)
}

func joinErrs(errs []error) error { return errors.Join(errs...) }

// resourceName is the name a client knows res by.
func resourceName(res types.Resource) string {
	if c, ok := res.(*extauthv1.ExtAuthConfig); ok {
		return c.GetConfigId()
	}
	return cachev3.GetResourceName(res)
}

type validator interface{ ValidateAll() error }

// validate runs the message's generated validation; Envoy messages all have one.
func validate(m any) error {
	if v, ok := m.(validator); ok {
		return v.ValidateAll()
	}
	return nil
}

// walker visits every message of a resource, Any contents included, and collects
// validation errors (with field paths) and references to other resources. It skips
// the fields whose type can hold neither an Any nor a message references looks at
// (walked), and builds a field path only for an error, so inspection costs a visit of
// what can hold an error, not a name for every match and header of every route.
type walker struct {
	refs []key
	errs []error
	root string    // the path of the message walked
	at   []segment // the path from root to the message being visited
}

// segment is one step of a field path: a field, with an index or map key.
type segment struct {
	field protoreflect.Name
	index int // of a list element; -1 when none
	key   string
	keyed bool
}

// message walks m, whose field path is path ("" for a resource).
func (w *walker) message(path string, m protoreflect.Message) {
	w.root, w.at = path, w.at[:0]
	w.visit(m)
}

func (w *walker) visit(m protoreflect.Message) {
	msg := m.Interface()
	if a, ok := msg.(*anypb.Any); ok {
		w.any(a)
		return
	}
	w.references(msg)
	for _, fd := range fieldsToWalk(m.Descriptor()) {
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				w.at = append(w.at, segment{field: fd.Name(), index: i})
				w.visit(l.Get(i).Message())
				w.at = w.at[:len(w.at)-1]
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				w.at = append(w.at, segment{field: fd.Name(), index: -1, key: k.String(), keyed: true})
				w.visit(mv.Message())
				w.at = w.at[:len(w.at)-1]
				return true
			})
		default:
			w.at = append(w.at, segment{field: fd.Name(), index: -1})
			w.visit(v.Message())
			w.at = w.at[:len(w.at)-1]
		}
	}
}

// path is the field path of the message being visited.
func (w *walker) path() string {
	p := w.root
	for _, s := range w.at {
		p = join(p, string(s.field))
		switch {
		case s.keyed:
			p += "[" + strconv.Quote(s.key) + "]"
		case s.index >= 0:
			p += "[" + strconv.Itoa(s.index) + "]"
		}
	}
	return p
}

// any unpacks a typed config, validates it and walks on inside it.
func (w *walker) any(a *anypb.Any) {
	inner, err := a.UnmarshalNew()
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("%s: cannot unpack %s: %w", orTop(w.path()), a.GetTypeUrl(), err))
		return
	}
	if err := validate(inner); err != nil {
		w.errs = append(w.errs, fmt.Errorf("%s (%s): %w", orTop(w.path()), inner.ProtoReflect().Descriptor().FullName(), err))
		return
	}
	w.visit(inner.ProtoReflect())
}

// walked are the messages the walker acts on: an Any, and what references looks at.
var walked = func() map[protoreflect.FullName]bool {
	m := map[protoreflect.FullName]bool{}
	for _, msg := range []proto.Message{&anypb.Any{}, &cluster.Cluster{}, &route.RouteAction{}, &core.GrpcService{},
		&tcpproxy.TcpProxy{}, &hcm.HttpConnectionManager{}, &tls.SdsSecretConfig{}} {
		m[msg.ProtoReflect().Descriptor().FullName()] = true
	}
	return m
}()

// walkFields caches fieldsToWalk by message type.
var walkFields sync.Map // protoreflect.MessageDescriptor → []protoreflect.FieldDescriptor

// fieldsToWalk are the fields of a message of type d that can hold a walked message,
// directly or under them, in the order protoreflect's Range visits them (declaration
// order; the fields of a oneof where its first field is), so errors keep their order.
func fieldsToWalk(d protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	if v, ok := walkFields.Load(d); ok {
		return v.([]protoreflect.FieldDescriptor)
	}
	type at struct {
		fd  protoreflect.FieldDescriptor
		pos int
	}
	var found []at
	first := map[protoreflect.OneofDescriptor]int{}
	fields := d.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		pos := i
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			if p, ok := first[od]; ok {
				pos = p
			} else {
				first[od] = i
			}
		}
		md := fd.Message()
		if fd.IsMap() {
			md = fd.MapValue().Message()
		}
		if md != nil && (walked[md.FullName()] || reachesWalked(md)) {
			found = append(found, at{fd, pos})
		}
	}
	slices.SortStableFunc(found, func(a, b at) int { return a.pos - b.pos })
	out := make([]protoreflect.FieldDescriptor, len(found))
	for i, f := range found {
		out[i] = f.fd
	}
	walkFields.Store(d, out)
	return out
}

// reaching caches reachesWalked by message type.
var reaching sync.Map // protoreflect.FullName → bool

// reachesWalked says whether a field of a message of type d, or of a message under it,
// can hold a walked message: the types are fixed, so this is known once per type.
func reachesWalked(d protoreflect.MessageDescriptor) bool {
	if v, ok := reaching.Load(d.FullName()); ok {
		return v.(bool)
	}
	seen := map[protoreflect.FullName]bool{d.FullName(): true}
	found := reaches(d, seen)
	reaching.Store(d.FullName(), found)
	if !found {
		for name := range seen { // everything under d: nothing under them either
			reaching.Store(name, false)
		}
	}
	return found
}

// reaches looks for a walked type under d, not again at the types in seen.
func reaches(d protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	fields := d.Fields()
	for i := range fields.Len() {
		md := fields.Get(i).Message() // a map's entry for a map field
		if md == nil || seen[md.FullName()] {
			continue
		}
		seen[md.FullName()] = true
		if walked[md.FullName()] || reaches(md, seen) {
			return true
		}
	}
	return false
}

// references records what msg needs served beside it: clusters named by routes,
// gRPC services and TCP proxies, the endpoints of EDS clusters, the route
// configurations of HTTP connection managers on RDS over ADS, and SDS secrets over ADS.
func (w *walker) references(msg any) {
	switch m := msg.(type) {
	case *cluster.Cluster:
		if m.GetType() == cluster.Cluster_EDS {
			name := m.GetEdsClusterConfig().GetServiceName()
			if name == "" {
				name = m.GetName()
			}
			w.refs = append(w.refs, key{EndpointType, name})
		}
	case *route.RouteAction:
		if c := m.GetCluster(); c != "" {
			w.refs = append(w.refs, key{ClusterType, c})
		}
		for _, c := range m.GetWeightedClusters().GetClusters() {
			w.refs = append(w.refs, key{ClusterType, c.GetName()})
		}
	case *core.GrpcService:
		if c := m.GetEnvoyGrpc().GetClusterName(); c != "" {
			w.refs = append(w.refs, key{ClusterType, c})
		}
	case *tcpproxy.TcpProxy:
		if c := m.GetCluster(); c != "" {
			w.refs = append(w.refs, key{ClusterType, c})
		}
	case *hcm.HttpConnectionManager:
		if rds := m.GetRds(); rds != nil && fromADS(rds.GetConfigSource()) {
			w.refs = append(w.refs, key{RouteType, rds.GetRouteConfigName()})
		}
	case *tls.SdsSecretConfig:
		if fromADS(m.GetSdsConfig()) {
			w.refs = append(w.refs, key{SecretType, m.GetName()})
		}
	}
}

// fromADS reports whether a config source is this control plane's ADS stream, the only
// source whose contents the consistency check can see.
func fromADS(cs *core.ConfigSource) bool { return cs.GetAds() != nil }

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func orTop(path string) string {
	if path == "" {
		return "(resource)"
	}
	return path
}
