// Package controlplane is Gatehouse's minimal control plane: it reads declarative
// resources, gives each a status, translates them and serves the result over xDS.
//
// The data flows down through rooms that only import downward:
//
//	source     (dir, later kube)   resources as read, in apiVersion/kind/namespace/name order
//	validate                       the edge stage: every resource with its status; the accepted set,
//	                               where a Rejected resource keeps its last Accepted version
//	translate                      pure functions: edge → proxy model → Envoy resources and ExtAuthConfig
//	xds                            go-control-plane server and caches, one snapshot per node role,
//	                               content-hash versions, ValidateAll + consistency before publishing,
//	                               NACK bookkeeping
//	pipeline                       runs the stages on every input and keeps each one for the admin endpoints
//
// Clients of xDS live beside what they feed: server/xdsclient (extauth) and devgateway
// (the dev gateway). cmd/gatehouse only wires.
package controlplane
