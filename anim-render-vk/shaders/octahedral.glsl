// Octahedral encoding of a unit vector into [-1, 1]² (two snorm16 in one uint): project onto
// the octahedron |x| + |y| + |z| = 1 and fold the lower half over the diagonals. Crowd
// vertices carry their normal this way, mesh vertices their tangent (common.glsl).
uint encode_octahedral(vec3 n) {
    n /= max(abs(n.x) + abs(n.y) + abs(n.z), 1e-20);
    vec2 e = n.xy;
    if (n.z < 0.0) {
        vec2 s = vec2(e.x >= 0.0 ? 1.0 : -1.0, e.y >= 0.0 ? 1.0 : -1.0);
        e = (1.0 - abs(n.yx)) * s;
    }
    return packSnorm2x16(e);
}

vec3 decode_octahedral(uint packed) {
    vec2 e = unpackSnorm2x16(packed);
    vec3 n = vec3(e, 1.0 - abs(e.x) - abs(e.y));
    float t = max(-n.z, 0.0);
    n.x += n.x >= 0.0 ? -t : t;
    n.y += n.y >= 0.0 ? -t : t;
    return normalize(n);
}
