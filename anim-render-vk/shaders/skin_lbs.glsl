// Linear blend skinning: p' = (sum_i w_i P_i) p, normals by the blended 3x3 part (or, with
// FLAG_INVERSE_TRANSPOSE, by its inverse transpose: the cofactor matrix signed by the
// determinant, which keeps normals perpendicular under non-uniform scale), renormalized.
// A vertex whose weights are all zero keeps its bind position and normal.
layout(std430, set = 0, binding = 4) readonly buffer Palette { mat4 palette[]; };

void skin_vertex(uint v, out vec3 p, out vec3 n, out vec4 t) {
    Vertex b = bind_vertex(v);
    t = vertex_tangent(b);
    uint base = v * pc.influences;
    mat4 m = mat4(0.0);
    float wsum = 0.0;
    for (uint k = 0u; k < pc.influences; ++k) {
        float w = weights[base + k];
        m += w * palette[pc.palette_offset + joints[base + k]];
        wsum += w;
    }
    if (wsum == 0.0) {
        p = b.pos;
        n = b.nrm;
        return;
    }
    p = (m * vec4(b.pos, 1.0)).xyz;
    // A tangent is a direction on the surface: it moves with the blended matrix itself.
    vec3 tt = mat3(m) * t.xyz;
    float tl2 = dot(tt, tt);
    t.xyz = t.w != 0.0 && tl2 > 1e-30 ? tt / sqrt(tl2) : t.xyz;
    vec3 nn;
    if ((pc.flags & FLAG_INVERSE_TRANSPOSE) != 0u) {
        vec3 c0 = m[0].xyz;
        vec3 c1 = m[1].xyz;
        vec3 c2 = m[2].xyz;
        vec3 k0 = cross(c1, c2);
        vec3 k1 = cross(c2, c0);
        vec3 k2 = cross(c0, c1);
        float s = dot(c0, k0) < 0.0 ? -1.0 : 1.0;
        nn = s * (k0 * b.nrm.x + k1 * b.nrm.y + k2 * b.nrm.z);
    } else {
        nn = mat3(m) * b.nrm;
    }
    float l2 = dot(nn, nn);
    n = l2 > 1e-30 ? nn / sqrt(l2) : vec3(0.0);
}
