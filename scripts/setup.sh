#!/usr/bin/env bash
# Idempotent setup: installs the system packages the workspace needs (glslc, which
# anim-render-vk's build.rs compiles the shaders with; the Vulkan loader, lavapipe and the
# validation layers the tests run on; Xvfb for the windowed test) and the glTF validator.
# When everything is already present it only checks, in well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(mesa-vulkan-drivers libvulkan1 vulkan-validationlayers vulkan-tools
          glslc xvfb xauth)
# g++: libfuzzer-sys compiles libFuzzer for the fuzz smoke (fuzz/smoke.sh, FUZZING.md).
PACKAGES+=(g++)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# node and npm may come from elsewhere than Debian's packages; only their commands count.
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The Khronos glTF-Validator (the tests validate the exported default character) runs on
# node, installed with the other packages when this machine has none.
scripts/validate-gltf.sh --install-only

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust (>= 1.89) with rustup first" >&2
  exit 1
fi
