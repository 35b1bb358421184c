package check

import (
	"fmt"
	"strings"
)

// Workloads are the Deployments and Pods of the namespace the control plane, extauth
// and the gateway proxies run in (Kubernetes only), read with one list of each.
type Workloads struct {
	Namespace   string
	Deployments []Deployment
	Pods        []Pod
}

// Deployment is one Deployment's replica counts.
type Deployment struct {
	Name                string
	Replicas, Available int32
}

// Pod is one Pod's phase, readiness and the reasons its containers wait.
type Pod struct {
	Name  string
	Phase string
	Ready bool
	// Waiting are "<container>: <reason>" for each container not running
	// (CrashLoopBackOff, ImagePullBackOff, …).
	Waiting []string
}

// workloadDeployments checks every Deployment has all its replicas available.
func workloadDeployments(w *Workloads) (errs []string) {
	for _, d := range w.Deployments {
		if d.Available < d.Replicas {
			errs = append(errs, fmt.Sprintf("deployment %s/%s: %d of %d replicas available", w.Namespace, d.Name, d.Available, d.Replicas))
		}
	}
	return errs
}

// pods checks every Pod runs (or completed) and is ready.
func pods(h *Health) (errs, warns []string) {
	w := h.Workloads
	if w == nil {
		return nil, nil
	}
	for _, p := range w.Pods {
		switch {
		case p.Phase == "Succeeded":
		case p.Phase != "Running":
			errs = append(errs, podError(w.Namespace, p, p.Phase))
		case !p.Ready:
			errs = append(errs, podError(w.Namespace, p, "Running, not ready"))
		}
	}
	return errs, nil
}

func podError(ns string, p Pod, state string) string {
	msg := fmt.Sprintf("pod %s/%s: %s", ns, p.Name, state)
	if len(p.Waiting) > 0 {
		msg += " (" + strings.Join(p.Waiting, "; ") + ")"
	}
	return msg
}
