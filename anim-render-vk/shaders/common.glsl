// Shared declarations of every pass: one push-descriptor set (set 0) and one push-constant
// block, so that all pipelines share one pipeline layout (see src/pipelines.rs).

// A vertex as the GPU stores it: position (w = 1) and normal (w = 0), 32 bytes (std430).
struct Vertex {
    vec4 pos;
    vec4 nrm;
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
