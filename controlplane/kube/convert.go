package kube

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// converted is a custom resource decoded into its api/v1 type, remembered by the
// resourceVersion it was decoded from so an unchanged object is not decoded again.
type converted struct {
	// resourceVersion is that of the object last seen: the same one is not looked at
	// again (every Input goes over every object).
	resourceVersion string
	// fingerprint is the generation, labels and annotations decoded (a status write
	// changes the resourceVersion, not them).
	fingerprint string
	generation  int64
	// res is the last version that decoded (nil when none did).
	res *source.Resource
}

// Origin names a Kubernetes object in Resource.Origin and in problems.
func Origin(kind, namespace, name string) string {
	return fmt.Sprintf("kube %s %s/%s", kind, namespace, name)
}

// convert decodes u with the same strict decoder as the directory source, from the
// fields a resource file has (the API server adds uid, managedFields, status…). A
// version that does not decode leaves the last one that did, and a Problem.
func (s *Source) convert(k kind, u *unstructured.Unstructured) (*source.Resource, int64, *source.Problem) {
	key := source.Key{APIVersion: k.APIVersion, Kind: k.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	c, seen := s.converted[key]
	if seen && c.res != nil && c.resourceVersion == u.GetResourceVersion() {
		return c.res, c.generation, nil
	}
	fp := strconv.FormatInt(u.GetGeneration(), 10) + "|" + metaFingerprint(u)
	if seen && c.fingerprint == fp {
		c.resourceVersion = u.GetResourceVersion()
		s.converted[key] = c
		return c.res, c.generation, nil
	}
	doc := map[string]any{
		"apiVersion": k.APIVersion,
		"kind":       k.Kind,
		"metadata":   metadataOf(u),
	}
	if spec, ok := u.Object["spec"]; ok {
		doc["spec"] = spec
	}
	origin := Origin(k.Kind, u.GetNamespace(), u.GetName())
	data, err := json.Marshal(doc)
	if err != nil {
		return s.keepLast(key, &source.Problem{Origin: origin, Message: err.Error()})
	}
	rs, problems := source.Decode(data, origin)
	if len(problems) > 0 || len(rs) != 1 {
		p := source.Problem{Origin: origin, Message: "does not decode"}
		if len(problems) > 0 {
			p = problems[0]
			p.Line = 0 // a line of the JSON we made says nothing to the user
		}
		return s.keepLast(key, &p)
	}
	res := &rs[0]
	s.converted[key] = converted{resourceVersion: u.GetResourceVersion(), fingerprint: fp, generation: u.GetGeneration(), res: res}
	return res, u.GetGeneration(), nil
}

func (s *Source) keepLast(key source.Key, p *source.Problem) (*source.Resource, int64, *source.Problem) {
	c := s.converted[key]
	if c.res == nil && s.last == nil && s.o.Memory != nil {
		if r, ok := s.o.Memory.Get(key); ok {
			return r, 0, p // what served before the restart; no generation of it is known
		}
	}
	return c.res, c.generation, p
}

// metaFingerprint identifies the labels and annotations of u.
func metaFingerprint(u *unstructured.Unstructured) string {
	b, _ := json.Marshal([]any{u.GetLabels(), u.GetAnnotations()}) // map keys sorted
	return string(b)
}

func metadataOf(u *unstructured.Unstructured) map[string]any {
	md := map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()}
	if l := u.GetLabels(); len(l) > 0 {
		md["labels"] = l
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		md["annotations"] = a
	}
	return md
}

// secretResource is a Secret as the pipeline reads it.
func secretResource(sec *corev1.Secret) source.Resource {
	obj := &apiv1.Secret{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.SecretAPIVersion, Kind: apiv1.KindSecret},
		Metadata: apiv1.Metadata{Name: sec.Name, Namespace: sec.Namespace, Labels: sec.Labels},
		Type:     string(sec.Type),
		Data:     sec.Data,
	}
	return source.Resource{
		APIVersion: apiv1.SecretAPIVersion, Kind: apiv1.KindSecret, Namespace: sec.Namespace, Name: sec.Name,
		Origin: Origin(apiv1.KindSecret, sec.Namespace, sec.Name), Object: obj,
		Hash: source.Hash(apiv1.SecretAPIVersion, apiv1.KindSecret, obj),
	}
}
