package v1

// ResourceStatus is the status subresource of a resource served from Kubernetes. Each
// control plane writes only its own entry, keyed by the namespace it runs in, so two
// installations watching the same resources never overwrite each other.
type ResourceStatus struct {
	Statuses map[string]ReporterStatus `json:"statuses,omitempty"`
}

// ReporterStatus is what one control plane says about a resource.
type ReporterStatus struct {
	// State is Accepted, Warning or Rejected.
	State string `json:"state"`
	// Reason holds every problem, one "<field path>: <problem>" a line.
	Reason string `json:"reason,omitempty"`
	// ReportedBy is "gatehouse", or the client that NACKed what the resource became.
	ReportedBy string `json:"reportedBy"`
	// ObservedGeneration is the metadata.generation the state is about.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// DataPlane is how far the serving version reached the control plane's clients:
	// "extauth 2/2" for an AuthConfig (replicas that acknowledged it, of those
	// connected), "proxies 1/1" for a VirtualService; brought up to date at every status
	// resync.
	DataPlane string `json:"dataPlane,omitempty"`
}
