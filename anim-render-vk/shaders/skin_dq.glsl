// Dual-quaternion skinning (Kavan et al. 2007) with bind-space scale, as anim-core's
// `SkinMethod::Dq` defines it. Each palette matrix P = [A | t] is split on the CPU into its
// rigid part, a unit dual quaternion q (R the rotation nearest A, translation t), and the
// symmetric bind-space scale S = Rᵀ·A (the polar decomposition A = R·S).
//
// Palette (binding 4): two vec4 per joint, the real part then the dual part, each (x, y, z, w).
// Scales (binding 7): three vec4 per joint, the columns of S (w unused), read only when
// FLAG_DQ_SCALE is set; a rigid palette (every S the identity) leaves the flag clear and the
// scale work is skipped for the whole draw.
//
// Per vertex: q = Σ wᵢ·sᵢ·qᵢ with sᵢ = ±1 putting each real part in the hemisphere of the
// first influence's (the hemisphere fix), normalized by |real(q)|; S = Σ wᵢ·Sᵢ;
// p' = q̂·(S·p) (scale in bind space, then rotate and translate); the normal by the cofactor
// of S (the inverse transpose up to a positive factor, negated when det S < 0), rotated and
// renormalized. A vertex whose weights are all zero keeps its rest position and normal.
layout(std430, set = 0, binding = 4) readonly buffer Palette { vec4 palette[]; };
layout(std430, set = 0, binding = 7) readonly buffer DqScales { vec4 dq_scales[]; };

vec3 quat_rotate(vec4 q, vec3 v) {
    vec3 t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

mat3 joint_scale(uint joint) {
    uint s = 3u * (pc.scale_offset + joint);
    return mat3(dq_scales[s].xyz, dq_scales[s + 1u].xyz, dq_scales[s + 2u].xyz);
}

void skin_vertex(uint v, out vec3 p, out vec3 n, out vec4 t) {
    Vertex b = bind_vertex(v);
    t = vertex_tangent(b);
    uint base = v * pc.influences;
    bool scaled = (pc.flags & FLAG_DQ_SCALE) != 0u;
    vec4 pivot = palette[2u * (pc.palette_offset + joints[base])];
    vec4 r = vec4(0.0);
    vec4 d = vec4(0.0);
    mat3 sm = mat3(0.0);
    float wsum = 0.0;
    for (uint k = 0u; k < pc.influences; ++k) {
        uint joint = joints[base + k];
        uint j = 2u * (pc.palette_offset + joint);
        vec4 qr = palette[j];
        vec4 qd = palette[j + 1u];
        float w = weights[base + k];
        wsum += w;
        if (scaled) {
            sm += w * joint_scale(joint);
        }
        if (dot(qr, pivot) < 0.0) {
            w = -w;
        }
        r += w * qr;
        d += w * qd;
    }
    if (wsum == 0.0) {
        p = b.pos;
        n = b.nrm;
        return;
    }
    float l2 = dot(r, r);
    float s = l2 > 1e-30 ? 1.0 / sqrt(l2) : 0.0;
    r *= s;
    d *= s;
    vec3 tr = 2.0 * (r.w * d.xyz - d.w * r.xyz + cross(r.xyz, d.xyz));
    vec3 bp = b.pos;
    vec3 bn = b.nrm;
    vec3 bt = t.xyz;
    if (scaled) {
        vec3 k0 = cross(sm[1], sm[2]);
        vec3 k1 = cross(sm[2], sm[0]);
        vec3 k2 = cross(sm[0], sm[1]);
        float sign_det = dot(sm[0], k0) < 0.0 ? -1.0 : 1.0;
        bp = sm * bp;
        bn = sign_det * (k0 * bn.x + k1 * bn.y + k2 * bn.z);
        bt = sm * bt;
    }
    vec3 tt = quat_rotate(r, bt);
    float tl2 = dot(tt, tt);
    t.xyz = t.w != 0.0 && tl2 > 1e-30 ? tt / sqrt(tl2) : t.xyz;
    p = quat_rotate(r, bp) + tr;
    vec3 nn = quat_rotate(r, bn);
    float nl2 = dot(nn, nn);
    n = nl2 > 1e-30 ? nn / sqrt(nl2) : vec3(0.0);
}
