#version 450
// PaletteCompute path's draw: instance k pulls its world-space vertices written by
// crowd_skin.comp at k * vertex_count + vertex index of the chunked buffer.
#include "crowd_common.glsl"
#include "crowd_list.glsl"
#include "crowd_chunks.glsl"
#include "crowd_out.glsl"

void main() {
    bool lod;
    uint k = crowd_slot(uint(gl_InstanceIndex));
    uint inst = crowd_instance(k, lod);
    SkinnedVertex v = load_skinned(k, uint(gl_VertexIndex));
    crowd_out(v.pos, decode_normal(v.nrm), inst);
}
