#version 450
// Static mesh pass: also draws the output of the compute skinning passes and CPU-skinned
// vertices (`GpuVertex`: position, tangent, normal, bitangent sign).
#include "common.glsl"
#include "camera.glsl"
layout(location = 0) in vec3 in_pos;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec4 in_color;
layout(location = 3) in uint in_tangent;
layout(location = 4) in float in_sign;
layout(location = 5) in vec4 in_uv;
#include "mesh_out.glsl"

void main() {
    vec4 t = in_sign == 0.0 ? vec4(0.0) : vec4(decode_octahedral(in_tangent), in_sign);
    mesh_out(in_pos, in_normal, t, in_color, in_uv);
}
