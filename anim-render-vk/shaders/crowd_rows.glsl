// The number of characters the palette and skinning passes cover: the visible count the
// list pass wrote, or every character. Needs crowd_common.glsl.
layout(std430, set = 0, binding = 9) readonly buffer Args { uint args[]; };

uint crowd_count() {
    return (pc.flags & FLAG_LIST) != 0u ? args[ARGS_VISIBLE] : pc.instance_count;
}

// The workgroup's index in a dispatch folded into rows (see MAX_ROW_GROUPS).
uint linear_group() {
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}
