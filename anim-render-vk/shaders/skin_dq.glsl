// Dual-quaternion skinning (Kavan et al. 2007). The palette holds two vec4 per joint: the
// real part then the dual part, each as (x, y, z, w). Each influence is negated when its real
// part lies in the other hemisphere from the first influence's (the hemisphere fix), the
// weighted sum is renormalized by the length of its real part, and the result is applied as
// rotation then translation. Dual quaternions carry no scale: a scaled joint loses its scale
// here (the palette is built from the rigid part of each matrix).
layout(std430, set = 0, binding = 4) readonly buffer Palette { vec4 palette[]; };

vec3 quat_rotate(vec4 q, vec3 v) {
    vec3 t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

void skin_vertex(uint v, out vec3 p, out vec3 n) {
    Vertex b = bind_vertices[v];
    uint base = v * pc.influences;
    vec4 pivot = palette[2u * (pc.palette_offset + joints[base])];
    vec4 r = vec4(0.0);
    vec4 d = vec4(0.0);
    float wsum = 0.0;
    for (uint k = 0u; k < pc.influences; ++k) {
        uint j = 2u * (pc.palette_offset + joints[base + k]);
        vec4 qr = palette[j];
        vec4 qd = palette[j + 1u];
        float w = weights[base + k];
        wsum += w;
        if (dot(qr, pivot) < 0.0) {
            w = -w;
        }
        r += w * qr;
        d += w * qd;
    }
    if (wsum == 0.0) {
        p = b.pos.xyz;
        n = b.nrm.xyz;
        return;
    }
    float l2 = dot(r, r);
    float s = l2 > 1e-30 ? 1.0 / sqrt(l2) : 0.0;
    r *= s;
    d *= s;
    vec3 t = 2.0 * (r.w * d.xyz - d.w * r.xyz + cross(r.xyz, d.xyz));
    p = quat_rotate(r, b.pos.xyz) + t;
    vec3 nn = quat_rotate(r, b.nrm.xyz);
    float nl2 = dot(nn, nn);
    n = nl2 > 1e-30 ? nn / sqrt(nl2) : vec3(0.0);
}
