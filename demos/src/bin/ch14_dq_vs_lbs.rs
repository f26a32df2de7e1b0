//! `ch14_dq_vs_lbs`: see [`demos::scenes::ch14_dq_vs_lbs`]. Run with `--help` for options and controls;
//! `--headless --frames N --out shot.png` renders without a display.

fn main() -> std::process::ExitCode {
    demos::main::<demos::scenes::ch14_dq_vs_lbs::DqVsLbs>()
}
