// Skinning inputs, read by vertex index ("vertex pulling") in the vertex-shader skinning
// passes and by invocation index in the compute passes.
layout(std430, set = 0, binding = 1) readonly buffer BindVertices { Vertex bind_vertices[]; };
layout(std430, set = 0, binding = 2) readonly buffer Joints { uint joints[]; };
layout(std430, set = 0, binding = 3) readonly buffer Weights { float weights[]; };

// The bind tangent is not morphed (TANGENT deltas are not uploaded); it is skinned with
// the vertex and re-orthogonalized against the normal where it is shaded.
// Morph targets (the variants skin_*_morph.comp and skin_*_morph.vert define MORPH; the
// crowd paths do not morph): the bind vertex plus the active
// targets' deltas, base + sum_i w_i * delta_i, before skinning (glTF's order), with the
// morphed normal normalized. Deltas
// (binding 8): two vec4 a target and vertex, target-major (position, normal; w unused).
// Active list (binding 9): the count and the mesh's vertex count, then one (target,
// weight) a target with a non-zero weight; at most MAX_ACTIVE_MORPH_TARGETS
// (anim-render-vk/src/skinning.rs) a draw, any number of targets a mesh.
#ifdef MORPH
struct MorphActive {
    uint target;
    float weight;
};
layout(std430, set = 0, binding = 8) readonly buffer MorphDeltas { vec4 morph_deltas[]; };
layout(std430, set = 0, binding = 9) readonly buffer MorphList {
    uint morph_count;
    uint morph_vertex_count;
    uint morph_pad0;
    uint morph_pad1;
    MorphActive morph_active[];
};
#endif

Vertex bind_vertex(uint v) {
    Vertex b = bind_vertices[v];
#ifdef MORPH
    vec3 base_nrm = b.nrm;
    for (uint i = 0u; i < morph_count; ++i) {
        MorphActive a = morph_active[i];
        uint d = 2u * (a.target * morph_vertex_count + v);
        b.pos += a.weight * morph_deltas[d].xyz;
        b.nrm += a.weight * morph_deltas[d + 1u].xyz;
    }
    if (morph_count > 0u) {
        // Unit again, as MorphTargets::apply makes it on the CPU (a normal morphed to
        // zero length keeps its base).
        float l2 = dot(b.nrm, b.nrm);
        b.nrm = l2 > 0.0 ? b.nrm * inversesqrt(l2) : base_nrm;
    }
#endif
    return b;
}
