// The instance record and visible list of the crowd draws. Needs crowd_common.glsl.
layout(std430, set = 0, binding = 7) readonly buffer Instances { CrowdInstance instances[]; };
layout(std430, set = 0, binding = 8) readonly buffer Visible { uint visible[]; };

// The position in the visible list (or the character, unlisted) of the `i`-th instance of
// a draw: with FLAG_LEVELS, read from the drawn level's list.
uint crowd_slot(uint i) {
    if ((pc.flags & FLAG_LEVELS) != 0u) {
        return visible[(1u + pc.level) * pc.instance_count + i];
    }
    return i;
}

// The character drawn as the `k`-th (instance index or dispatch row) and its LOD flag.
uint crowd_instance(uint k, out bool lod) {
    if ((pc.flags & FLAG_LIST) != 0u) {
        uint e = visible[k];
        lod = (e & LOD_BIT) != 0u;
        return e & ~LOD_BIT;
    }
    lod = false;
    return k;
}
