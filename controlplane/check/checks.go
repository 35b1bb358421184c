package check

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// describe is one resource and one status's reasons, as check prints them.
func describe(r *snapshots.ResourceHealth, st validate.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s.%s", r.Kind, r.Namespace, r.Name)
	if r.Origin != "" {
		fmt.Fprintf(&b, " (%s)", r.Origin)
	}
	fmt.Fprintf(&b, ": %s", st.State)
	if st.ReportedBy != validate.ReportedBy {
		fmt.Fprintf(&b, " by %s", st.ReportedBy)
	}
	for _, why := range st.Reasons {
		b.WriteString("\n    " + why)
	}
	return b.String()
}

// kind checks every status of every resource of k: validation's, and a client's NACK
// (so a rejected AuthConfig is listed under AuthConfigs, whoever rejected it, as
// /statuses and extauth status show it).
func kind(k string) func(*Health) ([]string, []string) {
	return func(h *Health) (errs, warns []string) {
		for i := range h.Data.Resources {
			r := &h.Data.Resources[i]
			if r.Kind != k {
				continue
			}
			for _, st := range r.Statuses {
				switch st.State {
				case validate.Rejected:
					errs = append(errs, describe(r, st))
				case validate.Warning:
					warns = append(warns, describe(r, st))
				}
			}
		}
		return errs, warns
	}
}

// sources checks the control plane could read every file (or object) of its source.
func sources(h *Health) (errs, warns []string) {
	for _, p := range h.Data.Problems {
		errs = append(errs, "cannot read "+p.String()+" (its last good resources keep serving)")
	}
	return errs, nil
}

// deployments checks (on Kubernetes) every Deployment has its replicas available, the
// control plane read its Settings, an extauth server follows it when any
// AuthConfig exists, and every proxy has a client.
func deployments(h *Health) (errs, warns []string) {
	if h.Workloads != nil {
		errs = append(errs, workloadDeployments(h.Workloads)...)
	}
	settings, _ := kind("Settings")(h)
	errs = append(errs, settings...)
	roles := map[string]int{}
	for _, c := range h.Status.Clients {
		roles[c.Role]++
	}
	if h.Data.Serving["AuthConfig"] > 0 && roles[xds.RoleExtauth] == 0 {
		errs = append(errs, "extauth: no extauth server follows the control plane (role \"extauth\"); secured routes deny every request")
	}
	for _, p := range h.Data.Proxies {
		if roles[p] == 0 {
			errs = append(errs, fmt.Sprintf("proxy %s: no gateway proxy follows the control plane with this role", p))
		}
	}
	return errs, nil
}

// proxies checks every proxy role's last publish.
func proxies(h *Health) (errs, warns []string) {
	for _, role := range sortedKeys(h.Data.PublishErrors) {
		if role == xds.RoleExtauth {
			continue
		}
		errs = append(errs, fmt.Sprintf("proxy %s: not published, the previous config keeps serving: %s", role, h.Data.PublishErrors[role]))
	}
	return errs, nil
}

// xdsClients checks every open stream answered the latest response of each type and no
// client rejected what it serves.
func xdsClients(h *Health) (errs, warns []string) {
	if msg, ok := h.Data.PublishErrors[xds.RoleExtauth]; ok {
		errs = append(errs, "role extauth: not published, the previous configs keep serving: "+msg)
	}
	now := h.Now
	if now.IsZero() {
		now = time.Now()
	}
	if c := h.Data.Certificate; c != nil {
		warns = append(warns, expiring("the control plane's certificate "+c.ID, c.NotAfter, now)...)
	}
	for _, c := range h.Status.Clients {
		if c.Role == "" {
			errs = append(errs, fmt.Sprintf("node %q: names no valid role in its metadata; it is served nothing", c.Node))
			continue
		}
		if c.NotAfter != nil {
			warns = append(warns, expiring(fmt.Sprintf("node %q (role %s): its certificate %s", c.Node, c.Role, c.Identity), *c.NotAfter, now)...)
		}
		for _, typ := range sortedKeys(c.Unanswered) {
			errs = append(errs, fmt.Sprintf("node %q (role %s): has not ACKed the latest %s (%d responses unanswered)", c.Node, c.Role, shortType(typ), c.Unanswered[typ]))
		}
	}
	return errs, warns
}

// CertificateWarning is how long before its end a certificate is reported.
const CertificateWarning = 7 * 24 * time.Hour

// expiring warns about a certificate that ends within CertificateWarning of now.
func expiring(what string, notAfter, now time.Time) []string {
	left := notAfter.Sub(now)
	if left > CertificateWarning {
		return nil
	}
	if left <= 0 {
		return []string{fmt.Sprintf("%s expired at %s: renew it (gatehouse certs generate, or the chart's certificate job)", what, notAfter.UTC().Format(time.RFC3339))}
	}
	return []string{fmt.Sprintf("%s expires in %s (%s): renew it (gatehouse certs generate, or the chart's certificate job)", what, left.Round(time.Hour), notAfter.UTC().Format(time.RFC3339))}
}

func shortType(typeURL string) string {
	return typeURL[strings.LastIndex(typeURL, ".")+1:]
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
