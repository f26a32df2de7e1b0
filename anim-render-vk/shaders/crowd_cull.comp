#version 450
// Crowd list pass: one invocation an instance. With FLAG_FRUSTUM, the instance's clip-A
// bounds (a model-space box, as a bounding sphere moved by the instance transform; while it
// blends in a clip B, the union of every clip's bounds, since the record does not name
// clip B) are
// tested against the six planes of the camera's view-projection (Vulkan depth 0..1);
// listed instances are appended to the visible list with an atomic counter (the indirect
// draw's instance count). With FLAG_LOD, those farther than `lod_distance` from the eye get
// LOD_BIT. With mesh LODs (`levels` > 0), each listed instance is also appended to the list
// of the level its projected error picks.
layout(local_size_x = 64) in;
#include "crowd_common.glsl"
layout(std430, set = 0, binding = 6) readonly buffer ClipBounds { vec4 clip_bounds[]; };
layout(std430, set = 0, binding = 7) readonly buffer Instances { CrowdInstance instances[]; };
// The visible list, then (with mesh LODs) one list a level of `instance_count` entries,
// each naming a position in the visible list.
layout(std430, set = 0, binding = 8) writeonly buffer Visible { uint visible[]; };
layout(std430, set = 0, binding = 9) buffer Args { uint args[]; };

vec4 row(mat4 m, int i) {
    return vec4(m[0][i], m[1][i], m[2][i], m[3][i]);
}

bool inside(vec4 plane, vec3 c, float r) {
    return dot(plane.xyz, c) + plane.w >= -r * length(plane.xyz);
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.instance_count) {
        return;
    }
    CrowdInstance c = instances[i];
    uint clip = uint(c.factors.w);
    vec3 lo = clip_bounds[2u * clip].xyz;
    vec3 hi = clip_bounds[2u * clip + 1u].xyz;
    if (c.factors.z > 0.0) {
        uint clips = uint(clip_bounds.length()) / 2u;
        for (uint k = 0u; k < clips; k++) {
            lo = min(lo, clip_bounds[2u * k].xyz);
            hi = max(hi, clip_bounds[2u * k + 1u].xyz);
        }
    }
    vec3 center = instance_point(c, 0.5 * (lo + hi));
    float radius = 0.5 * length(hi - lo) * abs(c.position_scale.w);
    if ((pc.flags & FLAG_FRUSTUM) != 0u) {
        mat4 m = cam.view_proj;
        vec4 r0 = row(m, 0);
        vec4 r1 = row(m, 1);
        vec4 r2 = row(m, 2);
        vec4 r3 = row(m, 3);
        if (!(inside(r3 + r0, center, radius) && inside(r3 - r0, center, radius) && inside(r3 + r1, center, radius)
              && inside(r3 - r1, center, radius) && inside(r2, center, radius)
              && inside(r3 - r2, center, radius))) {
            return;
        }
    }
    uint e = i;
    if ((pc.flags & FLAG_LOD) != 0u && distance(center, cam.eye.xyz) > pc.lod_distance) {
        e |= LOD_BIT;
    }
    uint k = atomicAdd(args[ARGS_INSTANCES], 1u);
    visible[k] = e;
    if (pc.levels > 0u) {
        // The coarsest level whose error, seen from the eye, covers at most the threshold
        // (anim_crowd::lod::select_level).
        float d = distance(center, cam.eye.xyz);
        uint level = 0u;
        for (uint l = 1u; l < pc.levels; l++) {
            if (pc.level_error[l] * abs(c.position_scale.w) * pc.level_pixels <= d) {
                level = l;
            }
        }
        uint j = atomicAdd(args[ARGS_LEVELS + 5u * level + 1u], 1u);
        visible[(1u + level) * pc.instance_count + j] = k;
    }
}
