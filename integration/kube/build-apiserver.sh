#!/usr/bin/env bash
# Builds kube-apiserver, kubectl (for the README's commands) and etcd from the Go module proxy, once, and caches them outside
# the repository so the Kubernetes tests run against a real API server (no registry here
# ships them; see KUBERNETES-TESTING notes in the README's Kubernetes section).
#
# The apiserver version follows the k8s.io/api version in go.mod (v0.Y.Z ↔ v1.Y.Z, or the
# newest v1.Y.* on the proxy). Prints the directory that holds both binaries, which is what
# KUBEBUILDER_ASSETS / GATEHOUSE_KUBE_ASSETS expect. A second run with the cache warm is instant.
set -euo pipefail
cd "$(dirname "$0")/../.."

ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
api_version="$(go list -m -f '{{.Version}}' k8s.io/api)"        # v0.37.2
minor="$(echo "$api_version" | cut -d. -f2)"
want="v1.${api_version#v0.}"
kube_version="$want"
if ! go list -m -json "k8s.io/kubernetes@$want" >/dev/null 2>&1; then
  kube_version="$(go list -m -versions k8s.io/kubernetes | tr ' ' '\n' | grep "^v1\.$minor\." | tail -1 || true)"
  [ -n "$kube_version" ] || kube_version="$(go list -m -versions k8s.io/kubernetes | tr ' ' '\n' | tail -1)"
  echo "build-apiserver: k8s.io/kubernetes $want is not on the proxy, using $kube_version" >&2
fi
staging_version="v0.${kube_version#v1.}"

cache="${GATEHOUSE_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse/kube}/$kube_version-etcd-$ETCD_VERSION"
if [ -x "$cache/kube-apiserver" ] && [ -x "$cache/kubectl" ] && [ -x "$cache/etcd" ]; then
  echo "$cache"
  exit 0
fi
mkdir -p "$cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off

if [ ! -x "$cache/kube-apiserver" ] || [ ! -x "$cache/kubectl" ]; then
  echo "build-apiserver: building kube-apiserver and kubectl $kube_version (cold: ~6 minutes on 2 cores)" >&2
  modinfo="$(go mod download -json "k8s.io/kubernetes@$kube_version")"
  gomod="$(echo "$modinfo" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  mkdir -p "$work/apiserver"
  {
    echo "module gatehouse.dev/kube-apiserver-build"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')"
    grep '^godebug ' "$gomod" || echo "godebug default=go1.24"
    echo
    echo "require k8s.io/kubernetes $kube_version"
    echo
    echo "replace ("
    # Every staging module k8s.io/kubernetes replaces with a local path is published as v0.Y.Z.
    sed -n '/^replace (/,/^)/p' "$gomod" | grep '=> ./staging' | awk -v v="$staging_version" '{print "\t" $1 " => " $1 " " v}'
    echo ")"
  } > "$work/apiserver/go.mod"
  cat > "$work/apiserver/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  (
    cd "$work/apiserver"
    go mod tidy >&2
    major=1 minor_n="${kube_version#v1.}"; minor_n="${minor_n%%.*}"
    ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version \
      -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor_n \
      -X k8s.io/client-go/pkg/version.gitVersion=$kube_version"
    for cmd in kube-apiserver kubectl; do
      if [ ! -x "$cache/$cmd" ]; then
        go build -trimpath -o "$cache/$cmd.tmp" -ldflags "$ldflags" "k8s.io/kubernetes/cmd/$cmd" >&2
        mv "$cache/$cmd.tmp" "$cache/$cmd"
      fi
    done
  )
fi

if [ ! -x "$cache/etcd" ]; then
  echo "build-apiserver: building etcd $ETCD_VERSION (cold: ~2 minutes)" >&2
  mkdir -p "$work/etcd"
  cat > "$work/etcd/go.mod" <<MOD
module gatehouse.dev/etcd-build

go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
  cat > "$work/etcd/tools.go" <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  (
    cd "$work/etcd"
    go mod tidy >&2
    go build -trimpath -ldflags "-s -w" -o "$cache/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
  )
  mv "$cache/etcd.tmp" "$cache/etcd"
fi
echo "$cache"
