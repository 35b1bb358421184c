package server

import (
	"fmt"
	"strings"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// ApplyResources translates the AuthConfigs of set (resolving its Secrets and Settings)
// and applies them to reg, returning every config's status. An AuthConfig defined more
// than once is Rejected, naming every place; neither definition replaces the version
// that serves.
func ApplyResources(reg *Registry, set *apiv1.Set) []Status {
	var cfgs []*extauthv1.ExtAuthConfig
	rejected := duplicateAuthConfigs(set)
	for _, r := range translate.ExtAuth(set) {
		if _, dup := rejected[r.ID]; dup {
			continue
		}
		if r.Err != nil {
			rejected[r.ID] = r.Err
			continue
		}
		cfgs = append(cfgs, r.Config)
	}
	return reg.Apply(cfgs, rejected)
}

// duplicateAuthConfigs returns an error for every AuthConfig id defined more than once.
// Which one would win depends on file names, so none does.
func duplicateAuthConfigs(set *apiv1.Set) map[string]error {
	where := map[string][]string{}
	var order []string
	for _, ac := range set.AuthConfigs {
		id := ac.Metadata.ID()
		if where[id] == nil {
			order = append(order, id)
		}
		origin := set.Origin(ac)
		if origin == "" {
			origin = "(not from a file)"
		}
		where[id] = append(where[id], origin)
	}
	out := map[string]error{}
	for _, id := range order {
		if places := where[id]; len(places) > 1 {
			out[id] = fmt.Errorf("authconfig %s is defined %d times (%s); none of them is applied: remove all but one",
				id, len(places), strings.Join(places, ", "))
		}
	}
	return out
}
