package source

// Memory is what served before this process started, as the control plane's state
// store kept it. A Source consults it only before its first Input, so that a restart
// behaves as a live edit does: a file (or object) that no longer decodes keeps the
// version that served, and a resource defined twice keeps the definition that served.
type Memory interface {
	// Origin is where the remembered version of k was read from.
	Origin(k Key) (string, bool)
	// Get is the remembered version of k, decoded in this process (its Hash is this
	// process's, so it compares with what the Source reads).
	Get(k Key) (*Resource, bool)
	// From is every remembered resource read from origin, in key order.
	From(origin string) []Resource
	// Same says whether the remembered version of r's key has r's content, without
	// decoding it.
	Same(r *Resource) bool
}
