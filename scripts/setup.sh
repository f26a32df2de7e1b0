#!/usr/bin/env bash
# Idempotent setup: installs the system packages the workspace needs and builds the
# merged shaderc archive that `shaderc-sys` links against. When everything is already
# present it only checks, in well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(mesa-vulkan-drivers libvulkan1 vulkan-validationlayers vulkan-tools
          libshaderc-dev glslang-dev spirv-tools glslc xvfb xauth)

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

# shaderc on Debian 12: libshaderc.so.1 is underlinked and libshaderc_combined.a lacks
# glslang, so merge Debian's static archives into one libshaderc_combined.a. The folder is
# what .cargo/config.toml gives shaderc-sys as SHADERC_LIB_DIR.
out=.deps/shaderc/libshaderc_combined.a
if [ ! -f "$out" ]; then
  libdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  mkdir -p .deps/shaderc
  {
    echo "CREATE $out"
    for a in libshaderc_combined.a libglslang.a libSPIRV.a libMachineIndependent.a \
             libGenericCodeGen.a libOSDependent.a libOGLCompiler.a libHLSL.a \
             libglslang-default-resource-limits.a libSPIRV-Tools-opt.a libSPIRV-Tools.a; do
      if [ ! -f "$libdir/$a" ]; then echo "setup: missing $libdir/$a" >&2; exit 1; fi
      echo "ADDLIB $libdir/$a"
    done
    echo "SAVE"
    echo "END"
  } | ar -M
  echo "setup: wrote $out" >&2
fi
