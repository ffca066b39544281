#!/usr/bin/env bash
# Builds stripe-mock (Stripe's own API mock, a Go module) for the commerce tests' payment
# provider, cached outside the work tree keyed by version:
#   ${CRONSCALE_CACHE:-$HOME/.cache/cronscale}/bin/stripe-mock-<version>/stripe-mock
# A complete cache dir is reused (a warm run costs nothing). Prints the binary's path.
# test/setup/stripe-mock.ts runs this script and starts the binary on a loopback port.
set -euo pipefail

version="${STRIPE_MOCK_VERSION:-v0.203.0}"
cache="${CRONSCALE_CACHE:-$HOME/.cache/cronscale}"
out="$cache/bin/stripe-mock-$version"
if [[ -f "$out/.complete" && -x "$out/stripe-mock" ]]; then
  echo "$out/stripe-mock"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "stripe-mock.sh: go is needed to build stripe-mock $version (module github.com/stripe/stripe-mock)" >&2
  exit 1
fi
mkdir -p "$cache/bin"
echo "stripe-mock.sh: building stripe-mock $version" >&2
tmp="$(mktemp -d "$cache/bin/.tmp-stripe-mock-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# go install of a versioned module path: the module proxy's copy, checked against the checksum
# database; no work tree module is involved.
CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly GOBIN="$tmp" \
  nice -n 10 go install -trimpath -ldflags "-s -w" "github.com/stripe/stripe-mock@$version"
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "stripe-mock.sh: built $out" >&2
echo "$out/stripe-mock"
