package xds

import (
	"errors"
	"fmt"
	"strconv"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
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
	if got := resourceName(res); got != name {
		return nil, fmt.Errorf("is named %q inside, listed as %q", got, name)
	}
	if err := validate(res); err != nil {
		return nil, err
	}
	w := &walker{}
	w.message("", res.ProtoReflect())
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
// validation errors (with field paths) and references to other resources.
type walker struct {
	refs []key
	errs []error
}

func (w *walker) message(path string, m protoreflect.Message) {
	msg := m.Interface()
	if a, ok := msg.(*anypb.Any); ok {
		w.any(path, a)
		return
	}
	w.references(msg)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				w.message(join(path, string(fd.Name()))+"["+strconv.Itoa(i)+"]", l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				w.message(join(path, string(fd.Name()))+"["+strconv.Quote(k.String())+"]", mv.Message())
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			w.message(join(path, string(fd.Name())), v.Message())
		}
		return true
	})
}

// any unpacks a typed config, validates it and walks on inside it.
func (w *walker) any(path string, a *anypb.Any) {
	inner, err := a.UnmarshalNew()
	if err != nil {
		w.errs = append(w.errs, fmt.Errorf("%s: cannot unpack %s: %w", orTop(path), a.GetTypeUrl(), err))
		return
	}
	if err := validate(inner); err != nil {
		w.errs = append(w.errs, fmt.Errorf("%s (%s): %w", orTop(path), inner.ProtoReflect().Descriptor().FullName(), err))
		return
	}
	w.message(path, inner.ProtoReflect())
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
