// Shared declarations of every pass: one push-descriptor set (set 0) and one push-constant
// block, so that all pipelines share one pipeline layout (see src/pipelines.rs).

// A vertex as the GPU stores it (32 bytes, std430, `GpuVertex`): position, the unit
// tangent octahedrally encoded (octahedral.glsl), normal, and the bitangent sign (±1;
// 0 when the vertex has no tangent).
struct Vertex {
    vec3 pos;
    uint tan;
    vec3 nrm;
    float sign;
};

layout(push_constant) uniform Push {
    mat4 model;            // model matrix of the drawn instance
    vec4 tint;             // multiplied into the vertex colour; a < 0.5 means unlit
    uint palette_offset;   // first palette entry of this instance
    uint influences;       // joint influences per vertex (4, 8, ...)
    uint vertex_count;     // vertices to skin (compute passes)
    uint out_offset;       // first output vertex (compute passes)
    uint flags;            // FLAG_* bits below
    uint scale_offset;     // first DQ scale matrix of this instance (with FLAG_DQ_SCALE)
} pc;

// LBS normals by the inverse transpose.
const uint FLAG_INVERSE_TRANSPOSE = 1u;
// DQ palette with scale: read the bind-space scale matrices (skin_dq.glsl).
const uint FLAG_DQ_SCALE = 2u;
// Shaded with the mesh's material (material.glsl) instead of the debug colouring.
const uint FLAG_MATERIAL = 4u;
// Bound at set 0, binding 10: the material block; 11..15 its textures.
#define MATERIAL_BINDING 10

#include "octahedral.glsl"

// The vertex's tangent: xyz unit, w the bitangent sign (0: none).
vec4 vertex_tangent(Vertex v) {
    return v.sign == 0.0 ? vec4(0.0) : vec4(decode_octahedral(v.tan), v.sign);
}
