// What every mesh vertex shader hands mesh.frag: world-space position, normal and tangent
// (w = bitangent sign, 0 without a tangent), the tinted colour and both texture coordinate
// sets. Needs common.glsl and camera.glsl.
layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec4 out_color;
layout(location = 2) out vec4 out_uv;
layout(location = 3) out vec4 out_tangent;
layout(location = 4) out vec3 out_world;

// Places a model-space vertex by the instance's model matrix and writes the outputs.
void mesh_out(vec3 p, vec3 n, vec4 t, vec4 color, vec4 uv) {
    vec4 world = pc.model * vec4(p, 1.0);
    gl_Position = cam.view_proj * world;
    mat3 m = mat3(pc.model);
    // Normals by the inverse transpose (the cofactor matrix, signed by the determinant), so
    // that they stay perpendicular under non-uniform scale.
    vec3 k0 = cross(m[1], m[2]);
    vec3 k1 = cross(m[2], m[0]);
    vec3 k2 = cross(m[0], m[1]);
    float s = dot(m[0], k0) < 0.0 ? -1.0 : 1.0;
    out_normal = s * (k0 * n.x + k1 * n.y + k2 * n.z);
    out_tangent = vec4(m * t.xyz, t.w);
    out_world = world.xyz;
    out_color = color * vec4(pc.tint.rgb, 1.0);
    out_uv = uv;
}
