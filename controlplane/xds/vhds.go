package xds

import "strings"

// VHDS: a route configuration with vhds has its virtual hosts served as resources of
// their own, named "<route configuration>/<virtual host>"; the route configuration's
// name is their namespace, which Envoy subscribes to by naming it.

// VirtualHostName is the name, as a VHDS resource and as a virtual host, of the virtual
// host id (a VirtualService's "<namespace>.<name>") of route configuration routeConfig:
// "<route configuration>/<id>". The part before the last "/" is its namespace.
func VirtualHostName(routeConfig, id string) string { return routeConfig + "/" + id }

// SplitVirtualHostName is the route configuration a VHDS resource name belongs to
// (its namespace) and the rest of it; ok is false for a name without "/".
func SplitVirtualHostName(name string) (routeConfig, id string, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// subscribedTo says whether a named subscription covers name: it names it, or, for
// VHDS, the route configuration whose namespace name is in (Envoy subscribes to a
// route configuration's virtual hosts by naming the route configuration).
func (w *deltaSet) subscribedTo(subscribed map[string]struct{}, name string) bool {
	if _, ok := subscribed[name]; ok {
		return true
	}
	if w.typeURL != VirtualHostType {
		return false
	}
	rc, _, ok := SplitVirtualHostName(name)
	if ok {
		_, ok = subscribed[rc]
	}
	return ok
}

// allInNamespaces is allNamed for VHDS: every resource served is compared whose name,
// or namespace, is subscribed to.
func (w *deltaSet) allInNamespaces(known map[string]string, subscribed map[string]struct{}) (changed []missed, removed []string, covers bool, err error) {
	covers = true
	for name := range w.resources {
		if !w.subscribedTo(subscribed, name) {
			covers = false
			continue
		}
		if err := w.compare(name, known, &changed, &removed); err != nil {
			return nil, nil, false, err
		}
	}
	for name := range known {
		if _, served := w.resources[name]; !served || !w.subscribedTo(subscribed, name) {
			removed = append(removed, name)
		}
	}
	return changed, removed, covers, nil
}
