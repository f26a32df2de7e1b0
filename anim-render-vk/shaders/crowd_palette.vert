#version 450
// PaletteVertex path: an instanced draw that skins from the palette buffer.
#include "crowd_common.glsl"
#include "crowd_list.glsl"
#include "crowd_palette.glsl"
#include "crowd_skin.glsl"
layout(location = 2) in vec4 in_color;
layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec4 out_color;

void main() {
    bool lod;
    uint inst = crowd_instance(uint(gl_InstanceIndex), lod);
    vec3 p;
    vec3 n;
    crowd_skin(uint(gl_VertexIndex), inst, lod, p, n);
    CrowdInstance c = instances[inst];
    gl_Position = cam.view_proj * vec4(instance_point(c, p), 1.0);
    out_normal = quat_rotate(c.rotation, n);
    out_color = in_color * vec4(instance_tint(inst), 1.0);
}
