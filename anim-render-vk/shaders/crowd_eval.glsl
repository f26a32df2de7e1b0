// Evaluates a character's palette entry for one joint from the animation atlas, exactly as
// anim_core::anim_texture's module docs define it (and `AnimAtlas::palette` computes):
// interpolate the two frames of clip A (and of clip B when its weight is positive), blend the
// clips by the weight, then turn the result into the METHOD's palette entry: three rows of the
// skinning matrix (LBS) or a unit dual quaternion, real then dual (DQ; rigid atlases only).
// Needs crowd_common.glsl.
layout(set = 0, binding = 4) uniform sampler2D atlas;
layout(std430, set = 0, binding = 5) readonly buffer InverseBind { mat4 inverse_bind[]; };

const uint TEXELS_PER_JOINT = LAYOUT == LAYOUT_DQ ? 2u : 3u;

vec4 atlas_texel(uint frame, uint joint, uint k) {
    return texelFetch(atlas, ivec2(int(frame), int(joint * TEXELS_PER_JOINT + k)), 0);
}

// Normalized lerp on the short way (a zero-length result, opposite inputs at exactly the
// middle, gives `a`, as the CPU reader does).
vec4 nlerp(vec4 a, vec4 b, float t) {
    if (dot(a, b) < 0.0) {
        b = -b;
    }
    vec4 v = mix(a, b, t);
    float n = length(v);
    return n > 0.0 ? v / n : a;
}

// Dual quaternions (real r, dual d) blended linearly with the hemisphere fix, divided by the
// real part's length.
void dq_blend(inout vec4 ar, inout vec4 ad, vec4 br, vec4 bd, float t) {
    if (dot(ar, br) < 0.0) {
        br = -br;
        bd = -bd;
    }
    vec4 r = mix(ar, br, t);
    vec4 d = mix(ad, bd, t);
    float l = length(r);
    if (l > 0.0) {
        ar = r / l;
        ad = d / l;
    }
}

// Rows of a rotation matrix from a unit quaternion.
void quat_rows(vec4 q, out vec3 r0, out vec3 r1, out vec3 r2) {
    float x = q.x, y = q.y, z = q.z, w = q.w;
    r0 = vec3(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w));
    r1 = vec3(2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w));
    r2 = vec3(2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y));
}

// A unit quaternion from the rows of a rotation matrix (Shepperd: the largest of the four
// candidates' diagonal sums keeps the square root well away from zero).
vec4 rows_quat(vec3 r0, vec3 r1, vec3 r2) {
    float tr = r0.x + r1.y + r2.z;
    vec4 q;
    if (tr > 0.0) {
        float s = 2.0 * sqrt(tr + 1.0);
        q = vec4((r2.y - r1.z) / s, (r0.z - r2.x) / s, (r1.x - r0.y) / s, 0.25 * s);
    } else if (r0.x > r1.y && r0.x > r2.z) {
        float s = 2.0 * sqrt(1.0 + r0.x - r1.y - r2.z);
        q = vec4(0.25 * s, (r0.y + r1.x) / s, (r0.z + r2.x) / s, (r2.y - r1.z) / s);
    } else if (r1.y > r2.z) {
        float s = 2.0 * sqrt(1.0 + r1.y - r0.x - r2.z);
        q = vec4((r0.y + r1.x) / s, 0.25 * s, (r1.z + r2.y) / s, (r0.z - r2.x) / s);
    } else {
        float s = 2.0 * sqrt(1.0 + r2.z - r0.x - r1.y);
        q = vec4((r0.z + r2.x) / s, (r1.z + r2.y) / s, 0.25 * s, (r1.x - r0.y) / s);
    }
    return normalize(q);
}

// ModelTrs: translation and scale lerped, rotation nlerped, at one clip's frame pair.
void trs_at(uint f0, uint f1, float t, uint joint, out vec3 tr, out vec4 q, out vec3 s) {
    tr = mix(atlas_texel(f0, joint, 0u).xyz, atlas_texel(f1, joint, 0u).xyz, t);
    q = nlerp(atlas_texel(f0, joint, 1u), atlas_texel(f1, joint, 1u), t);
    s = mix(atlas_texel(f0, joint, 2u).xyz, atlas_texel(f1, joint, 2u).xyz, t);
}

// SkinMatrix: the three rows lerped at one clip's frame pair.
void rows_at(uint f0, uint f1, float t, uint joint, out vec4 r0, out vec4 r1, out vec4 r2) {
    r0 = mix(atlas_texel(f0, joint, 0u), atlas_texel(f1, joint, 0u), t);
    r1 = mix(atlas_texel(f0, joint, 1u), atlas_texel(f1, joint, 1u), t);
    r2 = mix(atlas_texel(f0, joint, 2u), atlas_texel(f1, joint, 2u), t);
}

// SkinDualQuat: the dual quaternion at one clip's frame pair.
void dq_at(uint f0, uint f1, float t, uint joint, out vec4 r, out vec4 d) {
    r = atlas_texel(f0, joint, 0u);
    d = atlas_texel(f0, joint, 1u);
    dq_blend(r, d, atlas_texel(f1, joint, 0u), atlas_texel(f1, joint, 1u), t);
}

// The palette entry of `joint` for character `c`: e0, e1, e2 are the skinning matrix's rows
// (LBS), or e0 the real and e1 the dual part of its dual quaternion (DQ; e2 unused).
void eval_joint(CrowdInstance c, uint joint, out vec4 e0, out vec4 e1, out vec4 e2) {
    float wb = c.factors.z;
    bool blend = wb > 0.0;
    vec4 r0, r1, r2;
    if (LAYOUT == LAYOUT_DQ) {
        vec4 qr, qd;
        dq_at(c.frames.x, c.frames.y, c.factors.x, joint, qr, qd);
        if (blend) {
            vec4 br, bd;
            dq_at(c.frames.z, c.frames.w, c.factors.y, joint, br, bd);
            dq_blend(qr, qd, br, bd, wb);
        }
        if (METHOD == METHOD_DQ) {
            e0 = qr;
            e1 = qd;
            e2 = vec4(0.0);
            return;
        }
        vec3 t = 2.0 * (qr.w * qd.xyz - qd.w * qr.xyz + cross(qr.xyz, qd.xyz));
        vec3 a, b, d;
        quat_rows(qr, a, b, d);
        r0 = vec4(a, t.x);
        r1 = vec4(b, t.y);
        r2 = vec4(d, t.z);
    } else if (LAYOUT == LAYOUT_MATRIX) {
        rows_at(c.frames.x, c.frames.y, c.factors.x, joint, r0, r1, r2);
        if (blend) {
            vec4 b0, b1, b2;
            rows_at(c.frames.z, c.frames.w, c.factors.y, joint, b0, b1, b2);
            r0 = mix(r0, b0, wb);
            r1 = mix(r1, b1, wb);
            r2 = mix(r2, b2, wb);
        }
    } else {
        vec3 tr, s;
        vec4 q;
        trs_at(c.frames.x, c.frames.y, c.factors.x, joint, tr, q, s);
        if (blend) {
            vec3 tb, sb;
            vec4 qb;
            trs_at(c.frames.z, c.frames.w, c.factors.y, joint, tb, qb, sb);
            tr = mix(tr, tb, wb);
            q = nlerp(q, qb, wb);
            s = mix(s, sb, wb);
        }
        vec3 a, b, d;
        quat_rows(q, a, b, d);
        // Model matrix T·R·S as rows, then times the inverse bind matrix.
        mat4 model = transpose(mat4(vec4(a * s, tr.x), vec4(b * s, tr.y), vec4(d * s, tr.z), vec4(0.0, 0.0, 0.0, 1.0)));
        mat4 m = model * inverse_bind[joint];
        r0 = vec4(m[0].x, m[1].x, m[2].x, m[3].x);
        r1 = vec4(m[0].y, m[1].y, m[2].y, m[3].y);
        r2 = vec4(m[0].z, m[1].z, m[2].z, m[3].z);
    }
    if (METHOD == METHOD_LBS) {
        e0 = r0;
        e1 = r1;
        e2 = r2;
        return;
    }
    // The rigid part as a unit dual quaternion, as anim_math::dual::from_rigid_matrix reads
    // it: the rotation of the column-normalized basis (interpolated rows of a rigid atlas
    // are rigid up to the slight shrink of lerped rotations, which this drops), dual part
    // ½·(t, 0)·q.
    vec3 c0 = vec3(r0.x, r1.x, r2.x);
    vec3 c1 = vec3(r0.y, r1.y, r2.y);
    vec3 c2 = vec3(r0.z, r1.z, r2.z);
    c0 /= max(length(c0), 1e-30);
    c1 /= max(length(c1), 1e-30);
    c2 /= max(length(c2), 1e-30);
    vec4 qr = rows_quat(vec3(c0.x, c1.x, c2.x), vec3(c0.y, c1.y, c2.y), vec3(c0.z, c1.z, c2.z));
    e0 = qr;
    e1 = 0.5 * quat_mul(vec4(r0.w, r1.w, r2.w, 0.0), qr);
    e2 = vec4(0.0);
}
