#version 450
// PaletteCompute path's draw: instance k pulls its world-space vertices written by
// crowd_skin.comp at k * vertex_count + vertex index.
#include "crowd_common.glsl"
#include "crowd_list.glsl"
layout(std430, set = 0, binding = 11) readonly buffer Skinned { SkinnedVertex skinned[]; };
layout(location = 2) in vec4 in_color;
layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec4 out_color;

void main() {
    bool lod;
    uint k = uint(gl_InstanceIndex);
    uint inst = crowd_instance(k, lod);
    SkinnedVertex v = skinned[k * pc.vertex_count + uint(gl_VertexIndex)];
    gl_Position = cam.view_proj * vec4(v.pos, 1.0);
    out_normal = decode_normal(v.nrm);
    out_color = in_color * vec4(instance_tint(inst), 1.0);
}
