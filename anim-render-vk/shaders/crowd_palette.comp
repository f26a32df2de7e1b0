#version 450
// Palette pass of the palette paths: one invocation per (listed character, joint) evaluates
// the joint's palette entry from the atlas, once per joint instead of once per vertex.
// Workgroup row y is the character's place in the list, x covers the joints.
layout(local_size_x = 64) in;
#include "crowd_common.glsl"
#include "crowd_eval.glsl"
#include "crowd_list.glsl"
#include "crowd_rows.glsl"
layout(std430, set = 0, binding = 10) writeonly buffer Palette { vec4 palette[]; };

void main() {
    // One invocation per (listed character, joint), packed densely: a 24-joint skeleton
    // fills every lane instead of 24 of 64.
    uint t = linear_group() * 64u + gl_LocalInvocationID.x;
    uint k = t / pc.joints;
    uint joint = t - k * pc.joints;
    if (k >= crowd_count()) {
        return;
    }
    bool lod;
    uint inst = crowd_instance(k, lod);
    vec4 e0, e1, e2;
    eval_joint(instances[inst], joint, e0, e1, e2);
    uint at = (inst * pc.joints + joint) * PALETTE_STRIDE;
    palette[at] = e0;
    palette[at + 1u] = e1;
    if (PALETTE_STRIDE == 3u) {
        palette[at + 2u] = e2;
    }
}
