#version 450
// Half-Lambert shading (shade.glsl). Unlit when the tint's alpha is below 0.5 (debug colours).
#include "common.glsl"
#include "camera.glsl"
#include "shade.glsl"
layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec4 in_color;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = vec4(shade(in_normal, in_color.rgb, pc.tint.a >= 0.5), 1.0);
}
