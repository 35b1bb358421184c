package server

import (
	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// ApplyResources translates the AuthConfigs of set (resolving its Secrets and Settings)
// and applies them to reg, returning every config's status.
func ApplyResources(reg *Registry, set *apiv1.Set) []Status {
	var cfgs []*extauthv1.ExtAuthConfig
	rejected := map[string]error{}
	for _, r := range translate.ExtAuth(set) {
		if r.Err != nil {
			rejected[r.ID] = r.Err
			continue
		}
		cfgs = append(cfgs, r.Config)
	}
	return reg.Apply(cfgs, rejected)
}
