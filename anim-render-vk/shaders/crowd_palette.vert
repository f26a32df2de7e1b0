#version 450
// PaletteVertex path: an instanced draw that skins from the palette buffer.
#include "crowd_common.glsl"
#include "crowd_list.glsl"
#include "crowd_palette.glsl"
#include "crowd_skin.glsl"
#include "crowd_out.glsl"

void main() {
    bool lod;
    uint inst = crowd_instance(crowd_slot(uint(gl_InstanceIndex)), lod);
    vec3 p;
    vec3 n;
    crowd_skin(uint(gl_VertexIndex), inst, lod, p, n);
    CrowdInstance c = instances[inst];
    crowd_out(instance_point(c, p), quat_rotate(c.rotation, n), inst);
}
