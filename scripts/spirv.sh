#!/usr/bin/env bash
# Compiles every GLSL pass of anim-render-vk (shaders/*.vert, *.frag, *.comp) into the
# SPIR-V the crate carries (anim-render-vk/spirv/NAME.spv), with the flags of its build.rs,
# so that a build without glslc (a game depending on the published crate) has it. Run it
# after changing a shader; anim-render-vk/tests/packaged_spirv.rs fails until it is run.
set -euo pipefail
cd "$(dirname "$0")/../anim-render-vk"
glslc="${GLSLC:-glslc}"
mkdir -p spirv
rm -f spirv/*.spv
for f in shaders/*.vert shaders/*.frag shaders/*.comp; do
  "$glslc" --target-env=vulkan1.2 -O -I shaders -o "spirv/$(basename "$f").spv" "$f"
done
echo "spirv: $(ls spirv | wc -l) passes in anim-render-vk/spirv/"
