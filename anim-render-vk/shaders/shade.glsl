// Half-Lambert shading (seed 003): light = dot(n, l) * 0.5 + 0.5, so the side away from the
// light is darker but never black. Shared by mesh.frag and crowd.frag; needs camera.glsl.
vec3 shade(vec3 normal, vec3 color, bool lit) {
    float l2 = dot(normal, normal);
    vec3 n = l2 > 1e-20 ? normal / sqrt(l2) : vec3(0.0);
    float light = lit ? dot(n, cam.light_dir.xyz) * 0.5 + 0.5 : 1.0;
    return color * light;
}
