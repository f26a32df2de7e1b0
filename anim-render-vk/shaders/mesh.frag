#version 450
// The mesh passes' fragment shader: with FLAG_MATERIAL the mesh's material
// (material.glsl), otherwise its debug colouring with half-Lambert shading (shade.glsl;
// unlit when the tint's alpha is below 0.5).
#include "common.glsl"
#include "camera.glsl"
#include "shade.glsl"
#include "material.glsl"
layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec4 in_color;
layout(location = 2) in vec4 in_uv;
layout(location = 3) in vec4 in_tangent;
layout(location = 4) in vec3 in_world;
layout(location = 0) out vec4 out_color;

void main() {
    if ((pc.flags & FLAG_MATERIAL) != 0u) {
        out_color = shade_material(in_normal, in_tangent, in_color, in_uv, in_world, gl_FrontFacing);
        return;
    }
    out_color = vec4(shade(in_normal, in_color.rgb, pc.tint.a >= 0.5), 1.0);
}
