//! `ch10_cpu_gpu`: see [`demos::scenes::ch10_cpu_gpu`]. Run with `--help` for options and controls;
//! `--headless --frames N --out shot.png` renders without a display.

fn main() -> std::process::ExitCode {
    demos::main::<demos::scenes::ch10_cpu_gpu::CpuGpu>()
}
