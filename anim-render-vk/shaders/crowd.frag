#version 450
// The crowd passes' fragment shader: mesh.frag's half-Lambert shading (shade.glsl) with the
// crowd push-constant block.
#include "crowd_common.glsl"
#include "shade.glsl"
layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec4 in_color;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = vec4(shade(in_normal, in_color.rgb, pc.tint.a >= 0.5), 1.0);
}
