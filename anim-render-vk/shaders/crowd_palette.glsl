// Palette entries of the palette paths, read from the palette buffer written by
// crowd_palette.comp: entry (instance, joint) at `(instance * joints + joint) * PALETTE_STRIDE`.
layout(std430, set = 0, binding = 10) readonly buffer Palette { vec4 palette[]; };

void palette_entry(uint inst, uint joint, out vec4 e0, out vec4 e1, out vec4 e2) {
    uint at = (inst * pc.joints + joint) * PALETTE_STRIDE;
    e0 = palette[at];
    e1 = palette[at + 1u];
    e2 = PALETTE_STRIDE == 3u ? palette[at + 2u] : vec4(0.0);
}
