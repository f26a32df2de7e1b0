#version 450
// The book's crowd vertex shader (chapter 15): one instanced draw; each vertex evaluates its
// influences' skinning transforms from the animation atlas (two frames of clip A, and of
// clip B when blended), skins, and places the character by its instance transform.
#include "crowd_common.glsl"
#include "crowd_eval.glsl"
#include "crowd_list.glsl"
#include "crowd_skin.glsl"
#include "crowd_out.glsl"

void palette_entry(uint inst, uint joint, out vec4 e0, out vec4 e1, out vec4 e2) {
    eval_joint(instances[inst], joint, e0, e1, e2);
}

void main() {
    bool lod;
    uint inst = crowd_instance(crowd_slot(uint(gl_InstanceIndex)), lod);
    vec3 p;
    vec3 n;
    crowd_skin(uint(gl_VertexIndex), inst, lod, p, n);
    CrowdInstance c = instances[inst];
    crowd_out(instance_point(c, p), quat_rotate(c.rotation, n), inst);
}
