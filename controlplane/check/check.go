// Package check is `gatehouse check`: it judges one health snapshot of the control
// plane (every resource's statuses, the proxies, the open xDS streams) and reports each
// check in a fixed order, one line each, with the resources and reasons that failed.
// It never reads more than that one snapshot, so it costs one round trip whatever the
// number of resources.
package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/controlplane/snapshots"
)

// Check names, in the order they run and print. Pods are checked only against
// Kubernetes.
var Names = []string{"deployments", "pods", "sources", "upstreams", "auth-configs", "secrets", "virtual-services", "proxies", "xds"}

var titles = map[string]string{
	"deployments": "Deployments", "pods": "Pods", "sources": "Sources", "upstreams": "Upstreams", "auth-configs": "AuthConfigs",
	"secrets": "Secrets", "virtual-services": "VirtualServices", "proxies": "Proxies", "xds": "xDS",
}

// Result is one check's outcome.
type Result struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Status is "ok", "errors" or "skipped".
	Status   string   `json:"status"`
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Why says why a check was skipped.
	Why string `json:"why,omitempty"`
}

// Report is every check's Result, in order.
type Report struct {
	Checks   []Result `json:"checks"`
	Errors   int      `json:"errors"`
	Warnings int      `json:"warnings"`
	Healthy  bool     `json:"healthy"`
}

// Options select the checks.
type Options struct {
	// Exclude names checks not to run.
	Exclude []string
	// Kubernetes is true when checking a cluster (pods are checked only there).
	Kubernetes bool
}

// Validate says which of names is not a check.
func Validate(names []string) error {
	for _, n := range names {
		if !slices.Contains(Names, n) {
			return fmt.Errorf("check: %q is not a check (checks: %s)", n, strings.Join(Names, ", "))
		}
	}
	return nil
}

// Run judges h (nil when the control plane had no snapshot yet; fetchErr says why).
func Run(h *Health, fetchErr error, o Options) Report {
	var r Report
	for _, name := range Names {
		res := Result{Name: name, Title: titles[name], Status: "ok"}
		switch {
		case slices.Contains(o.Exclude, name):
			continue
		case name == "pods" && !o.Kubernetes:
			continue
		case h == nil && name == "deployments":
			res.Errors = []string{"control plane: " + fetchErr.Error()}
		case h == nil:
			res.Status, res.Why = "skipped", "the control plane has no snapshot"
		default:
			res.Errors, res.Warnings = checks[name](h)
		}
		if len(res.Errors) > 0 {
			res.Status = "errors"
		}
		r.Errors += len(res.Errors)
		r.Warnings += len(res.Warnings)
		r.Checks = append(r.Checks, res)
	}
	r.Healthy = r.Errors == 0
	return r
}

// Health is what the checks read: the health view and its status, and on Kubernetes
// the workloads.
type Health struct {
	Status snapshots.Status
	Data   snapshots.HealthData
	// Workloads are nil unless checking Kubernetes.
	Workloads *Workloads
	// Now is when certificates are judged (zero: the time of the check).
	Now time.Time
}

var checks = map[string]func(*Health) (errs, warns []string){
	"deployments":      deployments,
	"pods":             pods,
	"sources":          sources,
	"upstreams":        kind("Upstream"),
	"auth-configs":     kind("AuthConfig"),
	"secrets":          kind("Secret"),
	"virtual-services": kind("VirtualService"),
	"proxies":          proxies,
	"xds":              xdsClients,
}
