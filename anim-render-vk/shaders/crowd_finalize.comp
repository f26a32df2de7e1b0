#version 450
// One invocation after the list pass: completes the indirect draw and writes the dispatch
// sizes of the palette and skinning passes from the visible count.
layout(local_size_x = 1) in;
#include "crowd_common.glsl"
layout(std430, set = 0, binding = 9) buffer Args { uint args[]; };

void main() {
    uint n = args[ARGS_INSTANCES];
    args[0] = pc.index_count;
    args[2] = 0u;
    args[3] = 0u;
    args[4] = 0u;
    args[ARGS_PALETTE] = (pc.joints + 63u) / 64u;
    args[ARGS_PALETTE + 1u] = n;
    args[ARGS_PALETTE + 2u] = 1u;
    args[ARGS_SKIN] = (pc.vertex_count + 63u) / 64u;
    args[ARGS_SKIN + 1u] = n;
    args[ARGS_SKIN + 2u] = 1u;
    args[ARGS_VISIBLE] = n;
}
