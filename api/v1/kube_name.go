package v1

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxNameLength is the longest Kubernetes object name of the DNS-label kind.
const maxNameLength = 63

// KubeUpstreamName is the name of the Upstream discovered for port of a Service:
// "<namespace>-<service>-<port>", lower-case, with every character a DNS label cannot
// hold replaced by "-". A name longer than 63 characters is cut and ends in a hash of
// the whole name, so two long names that share a prefix stay apart.
func KubeUpstreamName(namespace, service string, port int) string {
	full := namespace + "-" + service + "-" + strconv.Itoa(port)
	var b strings.Builder
	for _, r := range strings.ToLower(full) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(full))
	suffix := hex.EncodeToString(sum[:])[:8]
	return strings.TrimRight(name[:maxNameLength-len(suffix)-1], "-") + "-" + suffix
}
