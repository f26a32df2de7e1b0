#version 450
// PaletteCompute path: skins every vertex of every listed character from the palette buffer
// into world space, character k of the list at vertices k * vertex_count onwards. Workgroup
// row y is the character's place in the list, x covers the vertices.
layout(local_size_x = 64) in;
#include "crowd_common.glsl"
#include "crowd_list.glsl"
#include "crowd_palette.glsl"
#include "crowd_skin.glsl"
layout(std430, set = 0, binding = 11) writeonly buffer Skinned { Vertex skinned[]; };

void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v >= pc.vertex_count) {
        return;
    }
    uint k = gl_WorkGroupID.y;
    bool lod;
    uint inst = crowd_instance(k, lod);
    vec3 p;
    vec3 n;
    crowd_skin(v, inst, lod, p, n);
    CrowdInstance c = instances[inst];
    skinned[k * pc.vertex_count + v] = Vertex(vec4(instance_point(c, p), 1.0), vec4(quat_rotate(c.rotation, n), 0.0));
}
