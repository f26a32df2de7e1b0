#version 450
// Debug lines (bones, joint axes, ground grid), world-space positions.
#include "camera.glsl"
layout(location = 0) in vec3 in_pos;
layout(location = 1) in vec4 in_color;
layout(location = 0) out vec4 out_color;

void main() {
    gl_Position = cam.view_proj * vec4(in_pos, 1.0);
    out_color = in_color;
}
