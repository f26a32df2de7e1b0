layout(set = 0, binding = 0) uniform Camera {
    mat4 view_proj;
    vec4 light_dir;   // unit direction towards the light, world space
    vec4 eye;         // camera position, world space
} cam;
