#version 450
// PaletteCompute path: skins every vertex of every listed character from the palette buffer
// into world space, character k of the list at vertices k * vertex_count onwards of the
// chunked skinned-vertex buffer (crowd_chunks.glsl). Workgroup
// row y is the character's place in the list, x covers the vertices.
layout(local_size_x = 64) in;
#include "crowd_common.glsl"
#include "crowd_list.glsl"
#include "crowd_rows.glsl"
#include "crowd_palette.glsl"
#include "crowd_skin.glsl"
#define SKINNED_WRITE
#include "crowd_chunks.glsl"

void main() {
    // Workgroups of one character are consecutive: character k, vertices 64·g .. 64·g + 63.
    uint per_character = (pc.vertex_count + 63u) / 64u;
    uint group = linear_group();
    uint k = group / per_character;
    uint v = (group - k * per_character) * 64u + gl_LocalInvocationID.x;
    if (k >= crowd_count() || v >= pc.vertex_count) {
        return;
    }
    bool lod;
    uint inst = crowd_instance(k, lod);
    vec3 p;
    vec3 n;
    crowd_skin(v, inst, lod, p, n);
    CrowdInstance c = instances[inst];
    store_skinned(k, v, SkinnedVertex(instance_point(c, p), encode_normal(quat_rotate(c.rotation, n))));
}
