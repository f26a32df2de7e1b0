#version 450
// Palette pass of the palette paths: one invocation per (listed character, joint) evaluates
// the joint's palette entry from the atlas, once per joint instead of once per vertex.
// Workgroup row y is the character's place in the list, x covers the joints.
layout(local_size_x = 64) in;
#include "crowd_common.glsl"
#include "crowd_eval.glsl"
#include "crowd_list.glsl"
layout(std430, set = 0, binding = 10) writeonly buffer Palette { vec4 palette[]; };

void main() {
    uint joint = gl_GlobalInvocationID.x;
    if (joint >= pc.joints) {
        return;
    }
    bool lod;
    uint inst = crowd_instance(gl_WorkGroupID.y, lod);
    vec4 e0, e1, e2;
    eval_joint(instances[inst], joint, e0, e1, e2);
    uint at = (inst * pc.joints + joint) * PALETTE_STRIDE;
    palette[at] = e0;
    palette[at + 1u] = e1;
    if (PALETTE_STRIDE == 3u) {
        palette[at + 2u] = e2;
    }
}
