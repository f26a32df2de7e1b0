// The PaletteCompute path's skinned-vertex buffer, bound in chunks (binding 11, an array of
// MAX_CHUNKS storage buffers) so that it is not limited to one storage-buffer range:
// character k of the list lives in chunk k / chunk_characters, at vertices
// (k % chunk_characters) · vertex_count onwards. Needs crowd_common.glsl; define
// SKINNED_WRITE before including it in the pass that writes.
// Chunks are indexed with constants only (a switch), so no descriptor-indexing feature is
// needed.
// 15: with the crowd set's 17 other descriptors, the 32 push descriptors every device
// with VK_KHR_push_descriptor supports.
const uint MAX_CHUNKS = 15u;
#ifdef SKINNED_WRITE
layout(std430, set = 0, binding = 11) writeonly buffer Skinned { SkinnedVertex v[]; } chunks[MAX_CHUNKS];
#else
layout(std430, set = 0, binding = 11) readonly buffer Skinned { SkinnedVertex v[]; } chunks[MAX_CHUNKS];
#endif

// Characters a chunk holds (0 in the push constants means one chunk for everything).
uint chunk_characters() {
    return pc.chunk_characters == 0u ? 0xffffffffu : pc.chunk_characters;
}

#define CHUNK_CASES(X) \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14)

#ifdef SKINNED_WRITE
void store_skinned(uint k, uint v, SkinnedVertex s) {
    uint per = chunk_characters();
    uint c = k / per;
    uint i = (k - c * per) * pc.vertex_count + v;
    switch (c) {
#define STORE(n) case n: chunks[n].v[i] = s; break;
        CHUNK_CASES(STORE)
#undef STORE
    }
}
#else
SkinnedVertex load_skinned(uint k, uint v) {
    uint per = chunk_characters();
    uint c = k / per;
    uint i = (k - c * per) * pc.vertex_count + v;
    switch (c) {
#define LOAD(n) case n: return chunks[n].v[i];
        CHUNK_CASES(LOAD)
#undef LOAD
    }
    return SkinnedVertex(vec3(0.0), 0u);
}
#endif
