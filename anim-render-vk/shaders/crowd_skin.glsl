// Skinning of one vertex of one character from its palette entries, which the including
// shader provides with `palette_entry` (evaluated from the atlas in the book's vertex shader,
// read from the palette buffer in the palette paths). LBS blends the matrix rows; DQ blends
// the dual quaternions with the hemisphere fix against the first influence, as skin_dq.glsl
// does (rigid atlases only, so no scale). With `lod` only the largest-weight influence counts.
// A vertex whose weights are all zero keeps its bind position and normal. Needs
// crowd_common.glsl.
layout(std430, set = 0, binding = 1) readonly buffer BindVertices { Vertex bind_vertices[]; };
layout(std430, set = 0, binding = 2) readonly buffer Joints { uint joints[]; };
layout(std430, set = 0, binding = 3) readonly buffer Weights { float weights[]; };

void palette_entry(uint inst, uint joint, out vec4 e0, out vec4 e1, out vec4 e2);

// Skins vertex `v` of character `inst` into model space.
void crowd_skin(uint v, uint inst, bool lod, out vec3 p, out vec3 n) {
    Vertex b = bind_vertices[v];
    uint base = v * pc.influences;
    uint first = 0u;
    uint count = pc.influences;
    if (lod) {
        for (uint k = 1u; k < pc.influences; ++k) {
            if (weights[base + k] > weights[base + first]) {
                first = k;
            }
        }
        count = first + 1u;
    }
    vec4 a0 = vec4(0.0);
    vec4 a1 = vec4(0.0);
    vec4 a2 = vec4(0.0);
    vec4 pivot = vec4(0.0);
    float wsum = 0.0;
    for (uint k = first; k < count; ++k) {
        float w = lod ? 1.0 : weights[base + k];
        if (weights[base + k] == 0.0) {
            continue;
        }
        vec4 e0, e1, e2;
        palette_entry(inst, joints[base + k], e0, e1, e2);
        if (METHOD == METHOD_DQ) {
            if (wsum == 0.0) {
                pivot = e0;
            }
            if (dot(e0, pivot) < 0.0) {
                w = -w;
            }
        }
        a0 += w * e0;
        a1 += w * e1;
        a2 += w * e2;
        wsum += abs(w);
    }
    if (wsum == 0.0) {
        p = b.pos.xyz;
        n = b.nrm.xyz;
        return;
    }
    vec3 nn;
    if (METHOD == METHOD_DQ) {
        float l2 = dot(a0, a0);
        float s = l2 > 1e-30 ? 1.0 / sqrt(l2) : 0.0;
        vec4 r = a0 * s;
        vec4 d = a1 * s;
        vec3 t = 2.0 * (r.w * d.xyz - d.w * r.xyz + cross(r.xyz, d.xyz));
        p = quat_rotate(r, b.pos.xyz) + t;
        nn = quat_rotate(r, b.nrm.xyz);
    } else {
        vec4 bp = vec4(b.pos.xyz, 1.0);
        p = vec3(dot(a0, bp), dot(a1, bp), dot(a2, bp));
        nn = vec3(dot(a0.xyz, b.nrm.xyz), dot(a1.xyz, b.nrm.xyz), dot(a2.xyz, b.nrm.xyz));
    }
    float nl2 = dot(nn, nn);
    n = nl2 > 1e-30 ? nn / sqrt(nl2) : vec3(0.0);
}
