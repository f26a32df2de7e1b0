// What every crowd vertex shader hands crowd.frag (as mesh_out.glsl does for mesh.frag):
// world-space normal and position, the tinted colour and both texture coordinate sets. The
// crowd paths do not skin tangents: normal maps use a frame from screen-space derivatives.
// Needs crowd_common.glsl.
layout(location = 2) in vec4 in_color;
layout(location = 5) in vec4 in_uv;
layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec4 out_color;
layout(location = 2) out vec4 out_uv;
layout(location = 3) out vec3 out_world;

void crowd_out(vec3 world, vec3 normal, uint inst) {
    gl_Position = cam.view_proj * vec4(world, 1.0);
    out_normal = normal;
    out_color = in_color * vec4(instance_tint(inst), 1.0);
    out_uv = in_uv;
    out_world = world;
}
