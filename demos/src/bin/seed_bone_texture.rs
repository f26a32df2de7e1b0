//! `seed_bone_texture`: see [`demos::scenes::seed_bone_texture`]. Run with `--help` for options and controls;
//! `--headless --frames N --out shot.png` renders without a display.

fn main() -> std::process::ExitCode {
    demos::main::<demos::scenes::seed_bone_texture::BoneTexture>()
}
