package kube

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"gatehouse.dev/gatehouse/controlplane/listing"
	"gatehouse.dev/gatehouse/controlplane/validate"
)

// Listed is a custom resource as `gatehouse get` lists it when it reads the cluster: the
// object in its resource-file form (apiVersion, kind, metadata, spec) and the status the
// control plane of controllerNamespace wrote on it. An object without that status, or
// whose status is about an older generation, is Pending: the control plane has not
// reported on what it is now.
func Listed(u *unstructured.Unstructured, controllerNamespace string) (listing.Resource, error) {
	doc := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": metadataOf(u)}
	if spec, ok := u.Object["spec"]; ok {
		doc["spec"] = spec
	}
	obj, err := json.Marshal(doc)
	if err != nil {
		return listing.Resource{}, fmt.Errorf("%s: %w", Origin(u.GetKind(), u.GetNamespace(), u.GetName()), err)
	}
	r := listing.Resource{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(),
		Origin: Origin(u.GetKind(), u.GetNamespace(), u.GetName()), Object: obj}
	st, ok := current(u, controllerNamespace)
	switch {
	case !ok:
		r.Statuses = []validate.Status{{State: listing.Pending,
			Reasons: []string{"no status from the control plane of " + controllerNamespace + " yet"}}}
	case st.ObservedGeneration != u.GetGeneration():
		r.Statuses = []validate.Status{{State: listing.Pending, ReportedBy: st.ReportedBy, Reasons: []string{fmt.Sprintf(
			"the control plane of %s has not reported on generation %d yet (on generation %d: %s)",
			controllerNamespace, u.GetGeneration(), st.ObservedGeneration, st.State)}}}
	default:
		s := validate.Status{State: validate.State(st.State), ReportedBy: st.ReportedBy}
		if st.Reason != "" {
			s.Reasons = strings.Split(st.Reason, "\n")
		}
		r.Statuses = []validate.Status{s}
		r.DataPlane = st.DataPlane
	}
	return r, nil
}
