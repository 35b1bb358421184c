#!/usr/bin/env bash
# Installs what `make test` needs and a fresh machine lacks. Safe to run repeatedly: it
# only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")"

need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v chromium >/dev/null || need+=(chromium)
command -v protoc >/dev/null || need+=(protobuf-compiler)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ -f oidcprovider/package-lock.json ] && [ ! -d oidcprovider/node_modules ]; then
  echo "installing the OpenID provider (npm ci)"
  (cd oidcprovider && npm ci --no-audit --no-fund --loglevel=error)
fi

# The ABI tests build a plugin with Go 1.25 and one with another golang.org/x/sys; fetch
# both through the module proxy now rather than in the middle of a test.
GOTOOLCHAIN=go1.25.0 go version >/dev/null
(cd testdata/plugins/depversion && go mod download)
