package proxyadmin

import (
	"sort"
	"strings"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ConfigDump is what the gateway holds in Envoy's admin.v3.ConfigDump shape (clusters,
// listeners, routes with their VHDS virtual hosts, secrets; endpoints with includeEDS),
// as JSON with Envoy's field names. The caller redacts it.
func (r *Recorder) ConfigDump(includeEDS bool) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	clusters := &adminv3.ClustersConfigDump{}
	for _, n := range r.names(resourcev3.ClusterType) {
		e := r.resources[resourcev3.ClusterType][n]
		if e.res != nil {
			clusters.DynamicActiveClusters = append(clusters.DynamicActiveClusters, &adminv3.ClustersConfigDump_DynamicCluster{
				Cluster: e.res, LastUpdated: ts(e), ErrorState: e.errorState()})
		}
	}
	listeners := &adminv3.ListenersConfigDump{}
	for _, n := range r.names(resourcev3.ListenerType) {
		e := r.resources[resourcev3.ListenerType][n]
		dl := &adminv3.ListenersConfigDump_DynamicListener{Name: n, ErrorState: e.errorState()}
		if e.res != nil {
			dl.ActiveState = &adminv3.ListenersConfigDump_DynamicListenerState{Listener: e.res, LastUpdated: ts(e)}
		}
		listeners.DynamicListeners = append(listeners.DynamicListeners, dl)
	}
	routes := &adminv3.RoutesConfigDump{}
	for _, n := range r.names(resourcev3.RouteType) {
		e := r.resources[resourcev3.RouteType][n]
		if e.res != nil {
			routes.DynamicRouteConfigs = append(routes.DynamicRouteConfigs, &adminv3.RoutesConfigDump_DynamicRouteConfig{
				RouteConfig: r.withVHDS(n, e.res), LastUpdated: ts(e), ErrorState: e.errorState()})
		}
	}
	secrets := &adminv3.SecretsConfigDump{}
	for _, n := range r.names(resourcev3.SecretType) {
		e := r.resources[resourcev3.SecretType][n]
		if e.res != nil {
			secrets.DynamicActiveSecrets = append(secrets.DynamicActiveSecrets, &adminv3.SecretsConfigDump_DynamicSecret{
				Name: n, Secret: e.res, LastUpdated: ts(e), ErrorState: e.errorState()})
		}
	}
	dumps := []proto.Message{clusters, listeners, routes, secrets}
	if includeEDS {
		eds := &adminv3.EndpointsConfigDump{}
		for _, n := range r.names(resourcev3.EndpointType) {
			e := r.resources[resourcev3.EndpointType][n]
			if e.res != nil {
				eds.DynamicEndpointConfigs = append(eds.DynamicEndpointConfigs, &adminv3.EndpointsConfigDump_DynamicEndpointConfig{
					EndpointConfig: e.res, LastUpdated: ts(e), ErrorState: e.errorState()})
			}
		}
		dumps = append(dumps, eds)
	}
	cd := &adminv3.ConfigDump{}
	for _, d := range dumps {
		a, err := anypb.New(d)
		if err != nil {
			return nil, err
		}
		cd.Configs = append(cd.Configs, a)
	}
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(cd)
}

// withVHDS is the route configuration named n that a holds, with its VHDS virtual hosts
// after its own when it has vhds, as Envoy's config dump shows it; a itself otherwise,
// or when it does not decode. r.mu is held.
func (r *Recorder) withVHDS(n string, a *anypb.Any) *anypb.Any {
	rc := &routev3.RouteConfiguration{}
	if a.UnmarshalTo(rc) != nil || rc.GetVhds() == nil {
		return a
	}
	for _, name := range r.names(resourcev3.VirtualHostType) {
		e := r.resources[resourcev3.VirtualHostType][name]
		if i := strings.LastIndexByte(name, '/'); i < 0 || name[:i] != n || e.res == nil {
			continue
		}
		vh := &routev3.VirtualHost{}
		if e.res.UnmarshalTo(vh) == nil {
			rc.VirtualHosts = append(rc.VirtualHosts, vh)
		}
	}
	out, err := anypb.New(rc)
	if err != nil {
		return a
	}
	return out
}

func (r *Recorder) names(typeURL string) []string {
	out := make([]string, 0, len(r.resources[typeURL]))
	for n := range r.resources[typeURL] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func ts(e *entry) *timestamppb.Timestamp {
	if e.updated.IsZero() {
		return nil
	}
	return timestamppb.New(e.updated)
}

func (e *entry) errorState() *adminv3.UpdateFailureState {
	if e.failed == nil {
		return nil
	}
	return &adminv3.UpdateFailureState{FailedConfiguration: e.failed.res, LastUpdateAttempt: timestamppb.New(e.failed.at), Details: e.failed.details}
}
