#version 450
// Static mesh pass: also draws the output of the compute skinning passes and CPU-skinned
// vertices.
#include "common.glsl"
#include "camera.glsl"
layout(location = 0) in vec3 in_pos;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec4 in_color;
layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec4 out_color;

void main() {
    gl_Position = cam.view_proj * (pc.model * vec4(in_pos, 1.0));
    out_normal = mat3(pc.model) * in_normal;
    out_color = in_color * vec4(pc.tint.rgb, 1.0);
}
