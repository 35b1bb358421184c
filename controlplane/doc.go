// Package controlplane is Gatehouse's minimal control plane: it reads declarative
// resources, gives each a status, translates them and serves the result over xDS.
//
// The data flows down through rooms that only import downward:
//
//	source     (dir, kube)         resources as read, in apiVersion/kind/namespace/name order;
//	                               a file or object that stops decoding keeps its last good version
//	state                          the serving version of every resource, kept across restarts
//	validate                       the edge stage: every resource with its status; what serves,
//	                               where a Rejected resource keeps its last Accepted version. It
//	                               validates by translating: each resource's model is built here
//	                               by translate's per-resource builders (VirtualHostOf, ClusterOf,
//	                               AuthConfig), a model that cannot be built is a Rejected status
//	                               with field paths, and the models of what serves are the edge's
//	                               Accepted, the proxies stage's input
//	translate                      pure functions: per-resource models, then Accepted → proxy
//	                               model → Envoy resources and ExtAuthConfigs (xds's types)
//	xds                            go-control-plane's server with a cache per node role and type,
//	                               content-hash versions, ValidateAll + consistency before publishing,
//	                               and the books of what each client acknowledged or rejected
//	pipeline                       runs the stages on every input, orders what reaches the roles
//	                               (make before break: a route after extauth has its AuthConfig and
//	                               every proxy its cluster), and keeps each stage for the admin
//	                               endpoints
//	snapshots, listing, check      what the admin endpoints and the CLI show of the stages
//	bootstrap                      the Envoy bootstrap that points a proxy at this control plane
//
// Clients of xDS live beside what they feed: server/xdsclient (extauth) and devgateway
// (the dev gateway). `gatehouse controlplane` wires these packages to flags.
package controlplane
