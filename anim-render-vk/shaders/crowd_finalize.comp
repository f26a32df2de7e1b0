#version 450
// One invocation after the list pass: completes the indirect draw and writes the dispatch
// sizes of the palette and skinning passes from the visible count.
layout(local_size_x = 1) in;
#include "crowd_common.glsl"
layout(std430, set = 0, binding = 9) buffer Args { uint args[]; };

// `groups` workgroups as rows of at most MAX_ROW_GROUPS (see linear_group).
uvec2 fold_groups(uint groups) {
    if (groups <= MAX_ROW_GROUPS) {
        return uvec2(groups, 1u);
    }
    return uvec2(MAX_ROW_GROUPS, (groups + MAX_ROW_GROUPS - 1u) / MAX_ROW_GROUPS);
}

void main() {
    uint n = args[ARGS_INSTANCES];
    args[0] = pc.index_count;
    args[2] = 0u;
    args[3] = 0u;
    args[4] = 0u;
    uvec2 p = fold_groups((n * pc.joints + 63u) / 64u);
    args[ARGS_PALETTE] = p.x;
    args[ARGS_PALETTE + 1u] = p.y;
    args[ARGS_PALETTE + 2u] = 1u;
    uvec2 s = fold_groups(n * ((pc.vertex_count + 63u) / 64u));
    args[ARGS_SKIN] = s.x;
    args[ARGS_SKIN + 1u] = s.y;
    args[ARGS_SKIN + 2u] = 1u;
    args[ARGS_VISIBLE] = n;
    for (uint l = 0u; l < pc.levels; l++) {
        uint a = ARGS_LEVELS + 5u * l;
        args[a] = pc.level_count[l];
        args[a + 2u] = pc.level_first[l];
        args[a + 3u] = 0u;
        args[a + 4u] = 0u;
    }
}
