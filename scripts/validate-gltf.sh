#!/usr/bin/env bash
# Runs the Khronos glTF-Validator (npm package `gltf-validator`) on the given .gltf/.glb
# files; exits non-zero when any file has an error (warnings, infos and hints are printed
# but pass). Installs the validator into the ignored folder .deps/node on first use; when it
# is already there this adds no network access and well under a second.
#
#   scripts/validate-gltf.sh FILE...
#   scripts/validate-gltf.sh --install-only
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$root/.deps/node"
modules="$prefix/node_modules"

if ! command -v node >/dev/null 2>&1; then
  echo "validate-gltf: node is not installed" >&2
  exit 2
fi
if [ ! -f "$modules/gltf-validator/package.json" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "validate-gltf: npm is not installed and $modules/gltf-validator is missing" >&2
    exit 2
  fi
  echo "validate-gltf: installing gltf-validator into $prefix" >&2
  mkdir -p "$prefix"
  # Pinned: the version the shared test assets were checked with.
  npm install --silent --no-audit --no-fund --prefix "$prefix" gltf-validator@2.0.0-dev.3.10 >&2
fi
if [ "${1:-}" = "--install-only" ]; then
  exit 0
fi
if [ "$#" -eq 0 ]; then
  echo "usage: $0 FILE..." >&2
  exit 2
fi
GLTF_VALIDATOR_MODULES="$modules" exec node "$root/scripts/gltf-validator/validate.js" "$@"
