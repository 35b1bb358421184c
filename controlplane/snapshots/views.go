package snapshots

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// Errors of the views.
var (
	// ErrNoSnapshot is the error of every view before the control plane's first run.
	ErrNoSnapshot = errors.New("no snapshot yet: the control plane has not read its resources")
	// ErrUnknownRole is the error of XDS for a role that is not served.
	ErrUnknownRole = errors.New("role not served")
)

func status(st pipeline.Stages) Status {
	s := Status{Version: st.Version, Time: st.Time, Counts: map[string]int{}}
	if st.Input != nil {
		s.Source = st.Input.Source
	}
	return s
}

// Input is the input stage: every resource, ordered by apiVersion, kind, namespace and
// name, and what could not be read. Counts are by kind, plus "problems".
func Input(st pipeline.Stages) (Envelope, error) {
	if st.Input == nil {
		return Envelope{}, ErrNoSnapshot
	}
	s := status(st)
	for r := range st.Input.Resources.All() {
		s.Counts[r.Kind]++
	}
	s.Counts["problems"] = len(st.Input.Problems)
	return Envelope{Status: s, Data: st.Input}, nil
}

// EdgeData is the edge stage keyed by kind, each kind's resources in input order.
type EdgeData struct {
	Resources map[string][]EdgeResource `json:"resources"`
	Problems  []source.Problem          `json:"problems,omitempty"`
}

// EdgeResource is one resource of the edge stage and how far it reached the clients.
type EdgeResource struct {
	*validate.Resource
	DataPlane string `json:"dataPlane,omitempty"`
}

// Edge is the edge stage: every resource with its statuses, keyed by kind, and (when o
// can tell) how far each reached the clients. Counts are by "<kind>/<state>".
func Edge(st pipeline.Stages, o Options) (Envelope, error) {
	if st.Edge == nil {
		return Envelope{}, ErrNoSnapshot
	}
	s := status(st)
	all := st.Edge.Resources.Slice()
	dp := DataPlane(o, all)
	d := EdgeData{Resources: map[string][]EdgeResource{}, Problems: st.Edge.Problems}
	for i, r := range all {
		d.Resources[r.Kind] = append(d.Resources[r.Kind], EdgeResource{Resource: r, DataPlane: dp[i]})
		s.Counts[r.Kind+"/"+string(r.State())]++
	}
	return Envelope{Status: s, Data: d}, nil
}

// Proxies is the proxies stage: one Proxy per gateway proxy role.
func Proxies(st pipeline.Stages) (Envelope, error) {
	if st.Edge == nil {
		return Envelope{}, ErrNoSnapshot
	}
	s := status(st)
	s.Counts["proxies"] = len(st.Proxies)
	px := st.Proxies
	if px == nil {
		px = []*translate.Proxy{}
	}
	return Envelope{Status: s, Data: px}, nil
}

// Served is one resource as served to a role.
type Served struct {
	Version  string          `json:"version,omitempty"`
	Resource json.RawMessage `json:"resource"`
}

// XDS is the xds stage keyed by node role, then type URL, then resource name, with the
// version each is served at (version may be nil) and the open streams. role, when not
// empty, keeps only that role. Counts are by "<role>/<type URL>".
func XDS(st pipeline.Stages, role string, version func(role, typeURL, name string) string, clients []xds.Client) (Envelope, error) {
	if st.XDS == nil {
		return Envelope{}, ErrNoSnapshot
	}
	s := status(st)
	s.Clients = clients
	data := map[string]map[string]map[string]Served{}
	for r, res := range st.XDS {
		if role != "" && r != role {
			continue
		}
		byType := map[string]map[string]Served{}
		for typ, named := range res {
			out := make(map[string]Served, len(named))
			for name, m := range named {
				full, err := xds.Expand(m) // compact virtual hosts, decoded
				if err != nil {
					return Envelope{}, fmt.Errorf("snapshots: %s %s %s: %w", r, typ, name, err)
				}
				b, err := protojson.Marshal(full)
				if err != nil {
					return Envelope{}, fmt.Errorf("snapshots: %s %s %s: %w", r, typ, name, err)
				}
				sv := Served{Resource: b}
				if version != nil {
					sv.Version = version(r, typ, name)
				}
				out[name] = sv
			}
			byType[typ] = out
			s.Counts[r+"/"+typ] = len(out)
		}
		data[r] = byType
	}
	if role != "" && data[role] == nil {
		return Envelope{}, fmt.Errorf("%w: %q (roles: %v)", ErrUnknownRole, role, roles(st))
	}
	return Envelope{Status: s, Data: data}, nil
}

func roles(st pipeline.Stages) []string {
	out := make([]string, 0, len(st.XDS))
	for r := range st.XDS {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// ProtoJSON renders one proto message for a view.
func ProtoJSON(m proto.Message) (json.RawMessage, error) { return protojson.Marshal(m) }
