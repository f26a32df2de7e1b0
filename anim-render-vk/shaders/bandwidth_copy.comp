#version 450
// Copy-bandwidth probe (src/timing.rs, `measure_compute_copy_bandwidth`): one uvec4 (16
// bytes) an invocation from the source storage buffer to the destination. It uses the
// shared pipeline layout: the source at binding 1 and the destination at binding 5 (both
// storage buffers there), the uvec4 count in `Push::vertex_count`.
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 1) readonly buffer Src { uvec4 src[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Dst { uvec4 dst[]; };

void main() {
    // Large copies are dispatched as a 2D grid of groups (see `dispatch_groups`).
    uint i = gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x) + gl_GlobalInvocationID.x;
    if (i >= pc.vertex_count) {
        return;
    }
    dst[i] = src[i];
}
