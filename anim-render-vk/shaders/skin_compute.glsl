// Body of the compute skinning passes: one invocation a vertex, the skinned vertex written
// to the output buffer that the static mesh pipeline then draws.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 5) writeonly buffer Out { Vertex out_vertices[]; };

void main() {
    // Large meshes are dispatched as a 2D grid of groups (see `dispatch_groups`).
    uint v = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
    if (v >= pc.vertex_count) {
        return;
    }
    vec3 p;
    vec3 n;
    vec4 t;
    skin_vertex(v, p, n, t);
    out_vertices[pc.out_offset + v] = Vertex(p, t.w != 0.0 ? encode_octahedral(t.xyz) : 0u, n, t.w);
}
