//! `ch12_blend`: see [`demos::scenes::ch12_blend`]. Run with `--help` for options and controls;
//! `--headless --frames N --out shot.png` renders without a display.

fn main() -> std::process::ExitCode {
    demos::main::<demos::scenes::ch12_blend::BlendDemo>()
}
