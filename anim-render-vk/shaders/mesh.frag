#version 450
// Half-Lambert shading (seed 003): light = dot(n, l) * 0.5 + 0.5, so the side away from the
// light is darker but never black. Unlit when the tint's alpha is below 0.5 (debug colours).
#include "common.glsl"
#include "camera.glsl"
layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec4 in_color;
layout(location = 0) out vec4 out_color;

void main() {
    float l2 = dot(in_normal, in_normal);
    vec3 n = l2 > 1e-20 ? in_normal / sqrt(l2) : vec3(0.0);
    float light = pc.tint.a < 0.5 ? 1.0 : dot(n, cam.light_dir.xyz) * 0.5 + 0.5;
    out_color = vec4(in_color.rgb * light, 1.0);
}
