// Shared declarations of the crowd passes (chapter 15): their own push-descriptor set and
// push-constant block (see `src/crowd.rs`, `CrowdLayout`), the instance record, the
// specialization constants and quaternion helpers.

// Atlas texel layout: 0 = ModelTrs, 1 = SkinMatrix, 2 = SkinDualQuat (anim_texture.rs).
layout(constant_id = 0) const uint LAYOUT = 0u;
// Skinning method: 0 = linear blend, 1 = dual quaternion.
layout(constant_id = 1) const uint METHOD = 0u;

const uint LAYOUT_TRS = 0u;
const uint LAYOUT_MATRIX = 1u;
const uint LAYOUT_DQ = 2u;
const uint METHOD_LBS = 0u;
const uint METHOD_DQ = 1u;
// vec4s a palette entry takes in the palette buffer: three matrix rows or real + dual.
const uint PALETTE_STRIDE = METHOD == METHOD_DQ ? 2u : 3u;

// The draws read instance indices from the visible list (written by crowd_cull.comp)
// instead of using the draw's instance index directly.
const uint FLAG_LIST = 1u;
// The cull pass tests the view frustum (otherwise every instance is listed).
const uint FLAG_FRUSTUM = 2u;
// The cull pass marks instances beyond `lod_distance` with LOD_BIT.
const uint FLAG_LOD = 4u;
// Shaded with the mesh's material (material.glsl, bound at MATERIAL_BINDING).
const uint FLAG_MATERIAL = 8u;
// A draw of one mesh level (`level`): its instances are read from that level's list
// (after the visible list in binding 8, `instance_count` entries a level), which names
// positions in the visible list.
const uint FLAG_LEVELS = 16u;
// Levels of detail a crowd holds at most (anim_crowd::lod::MAX_LODS).
const uint MAX_LODS = 4u;
#define MATERIAL_BINDING 12
// High bit of a visible-list entry: skin with the largest-weight influence only.
const uint LOD_BIT = 0x80000000u;

// Indirect arguments (binding 9), u32 words: VkDrawIndexedIndirectCommand at 0, the palette
// VkDispatchIndirectCommand at 5, the skinning one at 8, the visible count at 11, then one
// VkDrawIndexedIndirectCommand a level of detail at ARGS_LEVELS + 5 · level.
const uint ARGS_INSTANCES = 1u;
const uint ARGS_PALETTE = 5u;
const uint ARGS_SKIN = 8u;
const uint ARGS_VISIBLE = 11u;
const uint ARGS_LEVELS = 12u;

layout(push_constant) uniform CrowdPush {
    vec4 tint;             // rgb tint, a < 0.5 means unlit
    uint instance_count;   // characters in the instance buffer
    uint joints;           // joints of the atlas (palette entries a character)
    uint influences;       // influences a vertex
    uint vertex_count;     // vertices of the mesh
    uint index_count;      // indices of the mesh
    uint flags;            // FLAG_* above
    float lod_distance;    // with FLAG_LOD
    uint pad;
    uvec4 level_first;     // first index of each level of detail in the index buffer
    uvec4 level_count;     // index count of each level
    vec4 level_error;      // object-space error of each level (non-decreasing)
    uint levels;           // levels the list pass picks from (0: no mesh LODs)
    float level_pixels;    // pixels an object-space unit covers at distance 1, over the threshold
    uint level;            // with FLAG_LEVELS: the level drawn
    uint chunk_characters; // characters a skinned-vertex chunk holds (crowd_chunks.glsl)
} pc;

// A vertex as the GPU stores it (as `Vertex` in common.glsl).
struct Vertex {
    vec4 pos;
    vec4 nrm;
};

// A compute-skinned crowd vertex (16 bytes): world position, and the normal octahedrally
// encoded in two snorm16 (half the traffic of `Vertex`, so 100,000 Fox-size characters fit
// one storage buffer range).
struct SkinnedVertex {
    vec3 pos;
    uint nrm;
};

#include "octahedral.glsl"

uint encode_normal(vec3 n) {
    return encode_octahedral(n);
}

vec3 decode_normal(uint packed) {
    return decode_octahedral(packed);
}

// Dispatches are folded into rows of at most MAX_ROW_GROUPS workgroups (the limit every
// Vulkan device supports in x and y), so a crowd of any size fits: the linear workgroup
// index counts row by row (`linear_group` in crowd_rows.glsl). `fold_groups` in crowd.rs and the finalize pass fold the same way.
const uint MAX_ROW_GROUPS = 65535u;

// anim_core::crowd::CrowdInstance (64 bytes).
struct CrowdInstance {
    vec4 position_scale;   // xyz position, w uniform scale
    vec4 rotation;         // unit quaternion (i, j, k, w)
    uvec4 frames;          // clip A frame0, frame1; clip B frame0, frame1
    vec4 factors;          // t of A, t of B, weight of B, clip A index
};

#include "camera.glsl"

vec3 quat_rotate(vec4 q, vec3 v) {
    vec3 t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

vec4 quat_mul(vec4 a, vec4 b) {
    return vec4(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

// Instance transform: rotate, uniformly scale, translate.
vec3 instance_point(CrowdInstance c, vec3 p) {
    return c.position_scale.xyz + c.position_scale.w * quat_rotate(c.rotation, p);
}

// The per-instance tint: the draw's tint varied slightly by instance index.
vec3 instance_tint(uint inst) {
    return pc.tint.rgb * (0.8 + 0.2 * fract(float(inst) * 0.6180339));
}
