// Metallic-roughness shading (glTF 2.0 appendix B): GGX normal distribution, the
// height-correlated Smith visibility term and Schlick's Fresnel for the specular lobe,
// Lambert for the diffuse one, one directional light (camera.glsl's light_dir, radiance
// LIGHT_RADIANCE) and a constant ambient term (AMBIENT · base colour · occlusion), plus
// emission. Textures are sampled through their own samplers, at their coordinate set,
// after their KHR_texture_transform. The result is linear; `srgb_encode` writes it for the
// UNORM targets. Needs camera.glsl and MATERIAL_BINDING (the block's binding; the five
// textures follow it).

const float PI = 3.14159265;
// Radiance of the directional light (white).
const float LIGHT_RADIANCE = 3.0;
// The ambient light: a constant, white.
const float AMBIENT = 0.3;

// `MaterialUniform` in src/material.rs.
layout(std140, set = 0, binding = MATERIAL_BINDING) uniform MaterialBlock {
    vec4 base_color;   // linear RGBA factor
    vec4 emissive;     // rgb: factor × strength
    vec4 params;       // metallic, roughness, normal scale, occlusion strength
    vec4 alpha;        // cutoff, mode (0 opaque, 1 mask, 2 blend), unused, unused
    // Per texture (base colour, metallic-roughness, normal, occlusion, emissive): the two
    // rows of its 2×3 transform, with the coordinate set in the first row's w and 1 in the
    // second row's w when the texture is used.
    vec4 slots[10];
} mat;
layout(set = 0, binding = MATERIAL_BINDING + 1) uniform sampler2D tex_base;
layout(set = 0, binding = MATERIAL_BINDING + 2) uniform sampler2D tex_metallic_roughness;
layout(set = 0, binding = MATERIAL_BINDING + 3) uniform sampler2D tex_normal;
layout(set = 0, binding = MATERIAL_BINDING + 4) uniform sampler2D tex_occlusion;
layout(set = 0, binding = MATERIAL_BINDING + 5) uniform sampler2D tex_emissive;

bool slot_used(uint i) {
    return mat.slots[2u * i + 1u].w > 0.5;
}

// Texture coordinates of slot `i`: set 0 (uv.xy) or 1 (uv.zw), transformed.
vec2 slot_uv(uint i, vec4 uv) {
    vec4 r0 = mat.slots[2u * i];
    vec4 r1 = mat.slots[2u * i + 1u];
    vec3 c = vec3(r0.w > 0.5 ? uv.zw : uv.xy, 1.0);
    return vec2(dot(r0.xyz, c), dot(r1.xyz, c));
}

vec3 srgb_encode(vec3 c) {
    c = clamp(c, 0.0, 1.0);
    return mix(c * 12.92, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(vec3(0.0031308), c));
}

// The shaded, sRGB-encoded colour of a fragment (alpha from the base colour for BLEND, 1
// otherwise); discards MASK fragments below the cutoff.
vec4 shade_material(vec3 normal, vec4 tangent, vec4 color, vec4 uv, vec3 world, bool front) {
    // Derivatives first, while control flow is uniform (before any discard or branch).
    vec2 nuv = slot_uv(2u, uv);
    vec3 dp1 = dFdx(world);
    vec3 dp2 = dFdy(world);
    vec2 du1 = dFdx(nuv);
    vec2 du2 = dFdy(nuv);
    vec4 base = mat.base_color * color;
    if (slot_used(0u)) {
        base *= texture(tex_base, slot_uv(0u, uv));
    }
    uint mode = uint(mat.alpha.y + 0.5);
    if (mode == 1u && base.a < mat.alpha.x) {
        discard;
    }
    if (mode != 2u) {
        base.a = 1.0;
    }
    float metallic = mat.params.x;
    float roughness = mat.params.y;
    if (slot_used(1u)) {
        vec4 mr = texture(tex_metallic_roughness, slot_uv(1u, uv));
        roughness *= mr.g;
        metallic *= mr.b;
    }
    float l2 = dot(normal, normal);
    vec3 n = l2 > 1e-20 ? normal / sqrt(l2) : vec3(0.0, 0.0, 1.0);
    // A back face (drawn only when double-sided) is shaded with its own normal.
    float side = front ? 1.0 : -1.0;
    n *= side;
    if (slot_used(2u)) {
        vec3 t;
        vec3 b;
        if (tangent.w != 0.0) {
            t = tangent.xyz - n * dot(n, tangent.xyz);
            t = dot(t, t) > 1e-20 ? normalize(t) : vec3(1.0, 0.0, 0.0);
            b = cross(n, t) * tangent.w * side;
        } else {
            // No tangent (a CPU-skinned vertex without one): the frame from the screen-space
            // derivatives of position and texture coordinates (Schüler, "Normal Mapping
            // Without Precomputed Tangents", 2013), the bitangent turned up the image where
            // v decreases, as glTF's tangents have it. The sign of the screen-to-surface
            // determinant is kept (Vulkan's framebuffer y points down, which mirrors it).
            vec3 q1 = cross(dp2, n);
            vec3 q2 = cross(n, dp1);
            t = q1 * du1.x + q2 * du2.x;
            b = q1 * du1.y + q2 * du2.y;
            float m = max(dot(t, t), dot(b, b));
            float s = m > 1e-30 ? inversesqrt(m) : 0.0;
            s *= dot(dp1, q1) < 0.0 ? -1.0 : 1.0;
            t *= s;
            b *= -s;
        }
        vec3 tn = texture(tex_normal, nuv).xyz * 2.0 - 1.0;
        tn.xy *= mat.params.z;
        vec3 mapped = t * tn.x + b * tn.y + n * tn.z;
        n = dot(mapped, mapped) > 1e-20 ? normalize(mapped) : n;
    }
    float ao = 1.0;
    if (slot_used(3u)) {
        ao = 1.0 + mat.params.w * (texture(tex_occlusion, slot_uv(3u, uv)).r - 1.0);
    }
    vec3 emission = mat.emissive.rgb;
    if (slot_used(4u)) {
        emission *= texture(tex_emissive, slot_uv(4u, uv)).rgb;
    }
    vec3 v = normalize(cam.eye.xyz - world);
    vec3 l = cam.light_dir.xyz;
    vec3 h = normalize(l + v);
    float nl = max(dot(n, l), 0.0);
    float nv = max(abs(dot(n, v)), 1e-4);
    float nh = max(dot(n, h), 0.0);
    float vh = max(dot(v, h), 0.0);
    float a = roughness * roughness;
    float a2 = max(a * a, 1e-6);
    float dd = nh * nh * (a2 - 1.0) + 1.0;
    float d = a2 / (PI * dd * dd);
    float vis_den = nl * sqrt(nv * nv * (1.0 - a2) + a2) + nv * sqrt(nl * nl * (1.0 - a2) + a2);
    float vis = vis_den > 0.0 ? 0.5 / vis_den : 0.0;
    vec3 f0 = mix(vec3(0.04), base.rgb, metallic);
    vec3 f = f0 + (1.0 - f0) * pow(1.0 - vh, 5.0);
    vec3 diffuse = (1.0 - f) * (1.0 - metallic) * base.rgb / PI;
    vec3 specular = f * d * vis;
    vec3 c = LIGHT_RADIANCE * nl * (diffuse + specular) + AMBIENT * base.rgb * ao + emission;
    return vec4(srgb_encode(c), base.a);
}
