package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// kind is one custom resource kind the source reads.
type kind struct {
	APIVersion, Kind string
	GVR              schema.GroupVersionResource
}

// Kinds are the custom resources read, in the order of Input (apiVersion, kind).
var Kinds = []kind{
	{apiv1.CoreAPIVersion, apiv1.KindSettings, schema.GroupVersionResource{Group: "core.gatehouse.dev", Version: "v1", Resource: "settings"}},
	{apiv1.CoreAPIVersion, apiv1.KindUpstream, schema.GroupVersionResource{Group: "core.gatehouse.dev", Version: "v1", Resource: "upstreams"}},
	{apiv1.AuthConfigAPIVersion, apiv1.KindAuthConfig, schema.GroupVersionResource{Group: "enterprise.gateway.gatehouse.dev", Version: "v1", Resource: "authconfigs"}},
	{apiv1.VirtualServiceAPIVersion, apiv1.KindVirtualService, schema.GroupVersionResource{Group: "gateway.gatehouse.dev", Version: "v1", Resource: "virtualservices"}},
}

// serviceIndex indexes EndpointSlices by "<namespace>/<service>".
const serviceIndex = "service"

// informers are the shared informers of every watched namespace.
type informers struct {
	crs       map[schema.GroupVersionResource][]cache.SharedIndexInformer
	secrets   []cache.SharedIndexInformer
	services  []cache.SharedIndexInformer
	slices    []cache.SharedIndexInformer
	hasSynced []cache.InformerSynced
}

// startInformers starts the informers of o's namespaces. notify is told of every
// change that matters: with the key of a custom resource added, changed or deleted, or
// nil for any other object (a Service, an EndpointSlice, a Secret).
func startInformers(ctx context.Context, o Options, notify func(*source.Key)) (*informers, error) {
	namespaces := o.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	inf := &informers{crs: map[schema.GroupVersionResource][]cache.SharedIndexInformer{}}
	handlerOf := func(key func(obj any) *source.Key) cache.ResourceEventHandler {
		return cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { notify(key(obj)) },
			UpdateFunc: func(old, cur any) {
				if !statusOnly(old, cur) {
					notify(key(cur))
				}
			},
			DeleteFunc: func(obj any) { notify(key(obj)) },
		}
	}
	handler := handlerOf(func(any) *source.Key { return nil })
	crHandler := func(k kind) cache.ResourceEventHandler {
		return handlerOf(func(obj any) *source.Key {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			m, err := meta.Accessor(obj)
			if err != nil {
				return nil // not known: the next Input is made whole
			}
			return &source.Key{APIVersion: k.APIVersion, Kind: k.Kind, Namespace: m.GetNamespace(), Name: m.GetName()}
		})
	}
	add := func(i cache.SharedIndexInformer, handler cache.ResourceEventHandler) (cache.SharedIndexInformer, error) {
		if err := i.SetTransform(stripManagedFields); err != nil {
			return nil, fmt.Errorf("kube: %w", err)
		}
		if _, err := i.AddEventHandler(handler); err != nil {
			return nil, fmt.Errorf("kube: %w", err)
		}
		inf.hasSynced = append(inf.hasSynced, i.HasSynced)
		return i, nil
	}
	for _, ns := range namespaces {
		dyn := dynamicinformer.NewFilteredDynamicSharedInformerFactory(o.Dynamic, 0, ns, nil)
		for _, k := range Kinds {
			i, err := add(dyn.ForResource(k.GVR).Informer(), crHandler(k))
			if err != nil {
				return nil, err
			}
			inf.crs[k.GVR] = append(inf.crs[k.GVR], i)
		}
		typed := kubeinformers.NewSharedInformerFactoryWithOptions(o.Client, 0, kubeinformers.WithNamespace(ns))
		svc, err := add(typed.Core().V1().Services().Informer(), handler)
		if err != nil {
			return nil, err
		}
		sl := typed.Discovery().V1().EndpointSlices().Informer()
		if err := sl.AddIndexers(cache.Indexers{serviceIndex: sliceService}); err != nil {
			return nil, fmt.Errorf("kube: %w", err)
		}
		if sl, err = add(sl, handler); err != nil {
			return nil, err
		}
		inf.services, inf.slices = append(inf.services, svc), append(inf.slices, sl)
		// Only the Secret types resources reference are watched (a field selector),
		// not every Secret of the cluster.
		for _, t := range []string{apiv1.OAuthSecretType, apiv1.TLSSecretType} {
			f := kubeinformers.NewSharedInformerFactoryWithOptions(o.Client, 0, kubeinformers.WithNamespace(ns),
				kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.FieldSelector = "type=" + t }))
			sec, err := add(f.Core().V1().Secrets().Informer(), handler)
			if err != nil {
				return nil, err
			}
			inf.secrets = append(inf.secrets, sec)
			f.Start(ctx.Done())
		}
		dyn.Start(ctx.Done())
		typed.Start(ctx.Done())
	}
	return inf, nil
}

func (inf *informers) waitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), inf.hasSynced...)
}

func sliceService(obj any) ([]string, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	svc := s.Labels[discoveryv1.LabelServiceName]
	if svc == "" {
		return nil, nil
	}
	return []string{s.Namespace + "/" + svc}, nil
}

func (inf *informers) customResources(gvr schema.GroupVersionResource) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, i := range inf.crs[gvr] {
		for _, o := range i.GetStore().List() {
			if u, ok := o.(*unstructured.Unstructured); ok {
				out = append(out, u)
			}
		}
	}
	return out
}

// customResource returns the stored object, or nil.
func (inf *informers) customResource(gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	for _, i := range inf.crs[gvr] {
		if o, ok, _ := i.GetStore().GetByKey(namespace + "/" + name); ok {
			return o.(*unstructured.Unstructured)
		}
	}
	return nil
}

func listOf[T any](is []cache.SharedIndexInformer) []*T {
	var out []*T
	for _, i := range is {
		for _, o := range i.GetStore().List() {
			if t, ok := o.(*T); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

func (inf *informers) secretList() []*corev1.Secret   { return listOf[corev1.Secret](inf.secrets) }
func (inf *informers) serviceList() []*corev1.Service { return listOf[corev1.Service](inf.services) }

func (inf *informers) slicesOf(namespace, service string) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, i := range inf.slices {
		objs, _ := i.GetIndexer().ByIndex(serviceIndex, namespace+"/"+service)
		for _, o := range objs {
			out = append(out, o.(*discoveryv1.EndpointSlice))
		}
	}
	return out
}

// stripManagedFields drops metadata.managedFields from what the informers keep: nothing
// reads them, and they are a good part of the cache's memory.
func stripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// statusOnly says an update of a custom resource changed neither its spec (its
// generation) nor its labels and annotations: the status writes of the control plane
// itself, which must not run the pipeline again.
func statusOnly(old, cur any) bool {
	o, ok1 := old.(*unstructured.Unstructured)
	c, ok2 := cur.(*unstructured.Unstructured)
	return ok1 && ok2 && o.GetGeneration() == c.GetGeneration() && metaFingerprint(o) == metaFingerprint(c)
}
