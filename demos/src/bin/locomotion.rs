//! `locomotion`: see [`demos::scenes::locomotion`]. Run with `--help` for options and controls;
//! `--headless --frames N --out shot.png` renders without a display (playing a scripted input).

fn main() -> std::process::ExitCode {
    demos::main::<demos::scenes::locomotion::Locomotion>()
}
