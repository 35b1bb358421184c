package kube

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// discoveredService is what discovery made of one Service, remembered by the
// resourceVersions it was made from: with thousands of Services, one endpoint change
// rebuilds one Service's Upstreams.
type discoveredService struct {
	fingerprint string
	res         []source.Resource
}

// discover returns an Upstream per port of every Service discovery covers; a user's
// Upstream of the same name wins.
func (s *Source) discover(ds *apiv1.DiscoverySettings, user map[string]bool) []source.Resource {
	next := map[string]discoveredService{}
	var out []source.Resource
	if ds.On() {
		for _, svc := range s.inf.serviceList() {
			if !covers(ds, svc) || svc.Spec.Type == corev1.ServiceTypeExternalName {
				continue
			}
			key := svc.Namespace + "/" + svc.Name
			sl := s.inf.slicesOf(svc.Namespace, svc.Name)
			fp := fingerprint(svc, sl)
			d, ok := s.discovered[key]
			if !ok || d.fingerprint != fp {
				d = discoveredService{fingerprint: fp, res: upstreamsOf(svc, sl)}
			}
			next[key] = d
			for _, r := range d.res {
				if !user[r.ID()] {
					out = append(out, r)
				}
			}
		}
	}
	s.discovered = next
	return out
}

func covers(ds *apiv1.DiscoverySettings, svc *corev1.Service) bool {
	if ds == nil {
		return true
	}
	if len(ds.Namespaces) > 0 && !slices.Contains(ds.Namespaces, svc.Namespace) {
		return false
	}
	for k, v := range ds.Labels {
		if svc.Labels[k] != v {
			return false
		}
	}
	return true
}

func fingerprint(svc *corev1.Service, sl []*discoveryv1.EndpointSlice) string {
	rvs := make([]string, 0, len(sl)+1)
	for _, s := range sl {
		rvs = append(rvs, s.Name+"@"+s.ResourceVersion)
	}
	slices.Sort(rvs)
	return svc.ResourceVersion + "|" + strings.Join(rvs, ",")
}

func upstreamsOf(svc *corev1.Service, sl []*discoveryv1.EndpointSlice) []source.Resource {
	var out []source.Resource
	for _, p := range svc.Spec.Ports {
		if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			continue
		}
		name := apiv1.KubeUpstreamName(svc.Namespace, svc.Name, int(p.Port))
		u := &apiv1.Upstream{
			TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.CoreAPIVersion, Kind: apiv1.KindUpstream},
			Metadata: apiv1.Metadata{Name: name, Namespace: svc.Namespace},
			Spec: apiv1.UpstreamSpec{Kube: &apiv1.KubeUpstream{
				ServiceName: svc.Name, ServiceNamespace: svc.Namespace, ServicePort: int(p.Port),
				Selector: svc.Spec.Selector, Endpoints: readyEndpoints(sl, p.Name),
			}},
		}
		out = append(out, upstreamResource(u, "kube discovered from Service "+svc.Namespace+"/"+svc.Name+" port "+strconv.Itoa(int(p.Port))))
	}
	return out
}

// upstreamResource is a kube Upstream with its content hash, which covers the
// endpoints (they are not part of the JSON form the usual hash is over).
func upstreamResource(u *apiv1.Upstream, origin string) source.Resource {
	hashed := struct {
		Upstream  *apiv1.Upstream
		Endpoints []apiv1.Host
	}{u, u.Spec.Kube.Endpoints}
	return source.Resource{
		APIVersion: apiv1.CoreAPIVersion, Kind: apiv1.KindUpstream, Namespace: u.Metadata.Namespace, Name: u.Metadata.Name,
		Origin: origin, Object: u, Hash: source.Hash(apiv1.CoreAPIVersion, apiv1.KindUpstream, hashed),
	}
}

// readyEndpoints are the addresses of the ready endpoints of the slices' port named
// portName, sorted: terminating and not-ready endpoints are left out (drained). Never
// nil, which tells translation that discovery ran.
func readyEndpoints(sl []*discoveryv1.EndpointSlice, portName string) []apiv1.Host {
	out := []apiv1.Host{}
	seen := map[apiv1.Host]bool{}
	for _, s := range sl {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		for _, sp := range s.Ports {
			if sp.Port == nil || (sp.Name != nil && *sp.Name != portName) || (sp.Name == nil && portName != "") {
				continue
			}
			for _, ep := range s.Endpoints {
				// An unknown readiness counts as ready, as the EndpointSlice API says.
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				for _, a := range ep.Addresses {
					h := apiv1.Host{Addr: a, Port: int(*sp.Port)}
					if !seen[h] {
						seen[h] = true
						out = append(out, h)
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b apiv1.Host) int {
		if c := strings.Compare(a.Addr, b.Addr); c != 0 {
			return c
		}
		return a.Port - b.Port
	})
	return out
}

// withEndpoints is a user's kube Upstream with the ready endpoints of its Service port.
func (s *Source) withEndpoints(res source.Resource, u *apiv1.Upstream) source.Resource {
	k := *u.Spec.Kube
	k.Endpoints = []apiv1.Host{}
	for _, svc := range s.inf.serviceList() {
		if svc.Namespace != k.ServiceNamespace || svc.Name != k.ServiceName {
			continue
		}
		for _, p := range svc.Spec.Ports {
			if int(p.Port) == k.ServicePort {
				k.Endpoints = readyEndpoints(s.inf.slicesOf(svc.Namespace, svc.Name), p.Name)
			}
		}
	}
	cp := *u
	cp.Spec.Kube = &k
	out := upstreamResource(&cp, res.Origin)
	return out
}
