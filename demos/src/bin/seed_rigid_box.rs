//! `seed_rigid_box`: see [`demos::scenes::seed_rigid_box`]. Run with `--help` for options and controls;
//! `--headless --frames N --out shot.png` renders without a display.

fn main() -> std::process::ExitCode {
    demos::main::<demos::scenes::seed_rigid_box::RigidBox>()
}
