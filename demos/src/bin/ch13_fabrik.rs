//! `ch13_fabrik`: see [`demos::scenes::ch13_fabrik`]. Run with `--help` for options and controls;
//! `--headless --frames N --out shot.png` renders without a display.

fn main() -> std::process::ExitCode {
    demos::main::<demos::scenes::ch13_fabrik::FabrikDemo>()
}
