package main

import "os"

// cliAdmin is the control plane admin address the operator verbs talk to by default:
// GATEHOUSE_ADMIN, or the default admin address.
func cliAdmin() string {
	if v := os.Getenv("GATEHOUSE_ADMIN"); v != "" {
		return v
	}
	return defaultAdminListen
}

// cliProxyAdmin is the proxy admin address the proxy verbs talk to by default:
// GATEHOUSE_PROXY_ADMIN, or Envoy's admin address.
func cliProxyAdmin() string {
	if v := os.Getenv("GATEHOUSE_PROXY_ADMIN"); v != "" {
		return v
	}
	return defaultProxyAdmin
}
