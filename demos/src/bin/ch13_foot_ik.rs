//! `ch13_foot_ik`: see [`demos::scenes::ch13_foot_ik`]. Run with `--help` for options and controls;
//! `--headless --frames N --out shot.png` renders without a display.

fn main() -> std::process::ExitCode {
    demos::main::<demos::scenes::ch13_foot_ik::FootIkDemo>()
}
