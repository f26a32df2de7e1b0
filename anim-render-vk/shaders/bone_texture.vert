#version 450
// Seed 003's technique: the bone matrices come from a texel buffer (RGBA32F, four texels a
// matrix, one column each) instead of a fixed uniform array; four influences a vertex.
// A vertex whose weights are all zero keeps its bind position and normal (as in
// skin_lbs.glsl).
#include "common.glsl"
#include "camera.glsl"
layout(std430, set = 0, binding = 2) readonly buffer Joints { uint joints[]; };
layout(std430, set = 0, binding = 3) readonly buffer Weights { float weights[]; };
layout(set = 0, binding = 6) uniform samplerBuffer bones;
layout(location = 0) in vec3 in_pos;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec4 in_color;
layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec4 out_color;
// mesh.frag's other inputs, unused by this unlit debug pass.
layout(location = 2) out vec4 out_uv;
layout(location = 3) out vec4 out_tangent;
layout(location = 4) out vec3 out_world;

mat4 bone(uint j) {
    int base = int(4u * (pc.palette_offset + j));
    return mat4(texelFetch(bones, base), texelFetch(bones, base + 1), texelFetch(bones, base + 2),
                texelFetch(bones, base + 3));
}

void main() {
    uint base = uint(gl_VertexIndex) * pc.influences;
    mat4 m = mat4(0.0);
    float wsum = 0.0;
    for (uint k = 0u; k < pc.influences; ++k) {
        float w = weights[base + k];
        m += w * bone(joints[base + k]);
        wsum += w;
    }
    if (wsum == 0.0) {
        m = mat4(1.0);
    }
    vec4 world = pc.model * (m * vec4(in_pos, 1.0));
    gl_Position = cam.view_proj * world;
    out_uv = vec4(0.0);
    out_tangent = vec4(0.0);
    out_world = world.xyz;
    out_normal = mat3(pc.model) * (mat3(m) * in_normal);
    out_color = in_color * vec4(pc.tint.rgb, 1.0);
}
