// Body of the vertex-shader skinning passes: the vertex is pulled from the bind-pose
// storage buffer by gl_VertexIndex, skinned, then placed by the instance's model matrix.
#include "camera.glsl"
layout(location = 2) in vec4 in_color;
layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec4 out_color;

void main() {
    vec3 p;
    vec3 n;
    skin_vertex(uint(gl_VertexIndex), p, n);
    gl_Position = cam.view_proj * (pc.model * vec4(p, 1.0));
    out_normal = mat3(pc.model) * n;
    out_color = in_color * vec4(pc.tint.rgb, 1.0);
}
