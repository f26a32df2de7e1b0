#version 450
// The crowd passes' fragment shader: with FLAG_MATERIAL the mesh's material (material.glsl;
// no tangents, so normal maps use the derivative frame), otherwise mesh.frag's half-Lambert
// shading (shade.glsl), with the crowd push-constant block.
#include "crowd_common.glsl"
#include "shade.glsl"
#include "material.glsl"
layout(location = 0) in vec3 in_normal;
layout(location = 1) in vec4 in_color;
layout(location = 2) in vec4 in_uv;
layout(location = 3) in vec3 in_world;
layout(location = 0) out vec4 out_color;

void main() {
    if ((pc.flags & FLAG_MATERIAL) != 0u) {
        out_color = shade_material(in_normal, vec4(0.0), in_color, in_uv, in_world, gl_FrontFacing);
        return;
    }
    out_color = vec4(shade(in_normal, in_color.rgb, pc.tint.a >= 0.5), 1.0);
}
