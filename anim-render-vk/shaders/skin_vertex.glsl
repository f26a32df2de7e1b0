// Body of the vertex-shader skinning passes: the vertex is pulled from the bind-pose
// storage buffer by gl_VertexIndex, skinned (with its tangent), then placed by the
// instance's model matrix. Colours and texture coordinates come as vertex attributes.
#include "camera.glsl"
layout(location = 2) in vec4 in_color;
layout(location = 5) in vec4 in_uv;
#include "mesh_out.glsl"

void main() {
    vec3 p;
    vec3 n;
    vec4 t;
    skin_vertex(uint(gl_VertexIndex), p, n, t);
    mesh_out(p, n, t, in_color, in_uv);
}
