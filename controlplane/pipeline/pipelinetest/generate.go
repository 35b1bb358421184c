package pipelinetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// Namespaces is how many namespaces generated resources are spread over.
const Namespaces = 100

// The generated set of scale n: n Upstreams, n AuthConfigs and n VirtualServices, the
// i-th VirtualService serving vs-<i>.example.com with two routes to the i-th Upstream:
// /public open, / secured by the i-th AuthConfig. Plus the extauth server's Upstream.
// Resource i lives in namespace ns<i mod Namespaces>.

func ns(i int) string { return fmt.Sprintf("ns%02d", i%Namespaces) }

// Upstream is the i-th generated Upstream; port varies it (edits change the port).
func Upstream(i, port int) *apiv1.Upstream {
	return &apiv1.Upstream{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.CoreAPIVersion, Kind: apiv1.KindUpstream},
		Metadata: apiv1.Metadata{Name: fmt.Sprintf("up-%05d", i), Namespace: ns(i)},
		Spec: apiv1.UpstreamSpec{Static: &apiv1.StaticUpstream{Hosts: []apiv1.Host{
			{Addr: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), Port: port},
		}}},
	}
}

// AuthConfig is the i-th generated AuthConfig; value varies it.
func AuthConfig(i int, value string) *apiv1.AuthConfig {
	conf, _ := json.Marshal(map[string]any{"RequiredHeader": "x-required", "AllowedValues": []string{value}})
	return &apiv1.AuthConfig{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.AuthConfigAPIVersion, Kind: apiv1.KindAuthConfig},
		Metadata: apiv1.Metadata{Name: fmt.Sprintf("ac-%05d", i), Namespace: ns(i)},
		Spec: apiv1.AuthConfigSpec{Configs: []apiv1.AuthStep{{PluginAuth: &apiv1.PluginAuth{
			Name: "required_header", ExportedSymbolName: "Plugin", Config: conf,
		}}}},
	}
}

// VirtualService is the i-th generated VirtualService; prefix is its open route's
// prefix (edits change it).
func VirtualService(i int, prefix string) *apiv1.VirtualService {
	up := &apiv1.Ref{Name: fmt.Sprintf("up-%05d", i)}
	return &apiv1.VirtualService{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.VirtualServiceAPIVersion, Kind: apiv1.KindVirtualService},
		Metadata: apiv1.Metadata{Name: fmt.Sprintf("vs-%05d", i), Namespace: ns(i)},
		Spec: apiv1.VirtualServiceSpec{VirtualHost: apiv1.VirtualHost{
			Domains: []string{fmt.Sprintf("vs-%05d.example.com", i)},
			Routes: []apiv1.Route{
				{Matchers: []apiv1.Matcher{{Prefix: prefix}}, RouteAction: &apiv1.RouteAction{Single: &apiv1.Destination{Upstream: up}}},
				{
					Matchers:    []apiv1.Matcher{{Prefix: "/"}},
					RouteAction: &apiv1.RouteAction{Single: &apiv1.Destination{Upstream: up}},
					Options:     &apiv1.RouteOptions{Extauth: &apiv1.ExtauthOption{ConfigRef: &apiv1.Ref{Name: fmt.Sprintf("ac-%05d", i)}}},
				},
			},
		}},
	}
}

// ExtauthUpstream is the extauth server's Upstream (gatehouse-system.extauth).
func ExtauthUpstream(addr string, port int) *apiv1.Upstream {
	return &apiv1.Upstream{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.CoreAPIVersion, Kind: apiv1.KindUpstream},
		Metadata: apiv1.Metadata{Name: "extauth", Namespace: "gatehouse-system"},
		Spec:     apiv1.UpstreamSpec{Static: &apiv1.StaticUpstream{Hosts: []apiv1.Host{{Addr: addr, Port: port}}}},
	}
}

// Objects is the generated set of scale n, as decoded objects.
func Objects(n int) []any {
	out := []any{ExtauthUpstream("127.0.0.1", 8083)}
	for i := range n {
		out = append(out, Upstream(i, 8080), AuthConfig(i, "v0"), VirtualService(i, "/public"))
	}
	return out
}

// Resource wraps a generated object as the source would, with its hash.
func Resource(obj any, origin string) source.Resource {
	b, _ := json.Marshal(obj)
	var meta struct {
		apiv1.TypeMeta
		Metadata apiv1.Metadata `json:"metadata"`
	}
	_ = json.Unmarshal(b, &meta)
	return source.Resource{
		APIVersion: meta.APIVersion, Kind: meta.Kind, Namespace: meta.Metadata.Namespace, Name: meta.Metadata.Name,
		Origin: origin, Object: obj, Hash: source.Hash(meta.APIVersion, meta.Kind, obj),
	}
}

// Input is the generated set of scale n as the source would publish it.
func Input(n int) *source.Input {
	objs := Objects(n)
	rs := make([]source.Resource, 0, len(objs))
	for _, o := range objs {
		rs = append(rs, Resource(o, "generated"))
	}
	slices.SortFunc(rs, func(a, b source.Resource) int { return a.Key().Compare(b.Key()) })
	return source.NewInput("generated", rs, nil)
}

// Replace returns a copy of in with the resource of obj's key replaced by obj.
func Replace(in *source.Input, obj any) *source.Input {
	r := Resource(obj, "generated")
	if _, found := in.Resources.Get(r.Key()); !found {
		panic("pipelinetest: no resource " + r.Key().String())
	}
	return &source.Input{Source: in.Source, Resources: in.Resources.With([]source.Resource{r}, nil), Problems: in.Problems}
}

// WriteDir writes the generated set of scale n as block YAML files into dir, perFile
// resources to a file (files resources-00000.yaml, ...), for a process-level benchmark
// of `gatehouse controlplane --resources dir`. extauthAddr:extauthPort is where the
// extauth server's Upstream points.
func WriteDir(dir string, n, perFile int, extauthAddr string, extauthPort int) error {
	objs := Objects(n)
	objs[0] = ExtauthUpstream(extauthAddr, extauthPort)
	for f := 0; f*perFile < len(objs); f++ {
		var b strings.Builder
		for _, o := range objs[f*perFile : min((f+1)*perFile, len(objs))] {
			doc, err := yaml.Marshal(o) // block YAML, as people write resource files
			if err != nil {
				return err
			}
			b.WriteString("---\n")
			b.Write(doc)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("resources-%05d.yaml", f)), []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("pipelinetest: %w", err)
		}
	}
	return nil
}
