package xds

import (
	"unsafe"
)

// ownCopy is known in a new map whose names and versions are the set's own strings
// wherever they are the same resource and version, so that what a client announced,
// decoded from its request, does not stay.
func (w *deltaSet) ownCopy(known map[string]string) map[string]string {
	m := make(map[string]string, len(known))
	for name, v := range known {
		if r, ok := w.resources[name]; ok {
			name = r.name
			if v == r.version() {
				v = r.version()
			}
		}
		m[name] = v
	}
	return m
}

// sameString says whether a and b share their bytes (not only their content).
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}
