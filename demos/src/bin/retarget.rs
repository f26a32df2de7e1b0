//! `retarget`: see [`demos::scenes::retarget`]. Run with `--help` for options and controls;
//! `--headless --frames N --out shot.png` renders without a display.

fn main() -> std::process::ExitCode {
    demos::main::<demos::scenes::retarget::Retarget>()
}
