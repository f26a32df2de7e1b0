//! Which SIMD kernels a test runs. A test that compares a kernel with the scalar loop runs
//! what its name says or fails: when the CPU lacks a kernel, the test fails, unless the
//! environment variable `ANIM_SKIP_KERNELS` names it (a comma-separated list of kernel
//! names, or `all`), in which case it says so on stderr and passes that kernel over. So a
//! machine without AVX2 cannot pass a SIMD test by comparing the scalar loop with itself.
//!
//! `.ci/run` sets `ANIM_SKIP_KERNELS` from the CI machine's own CPU flags, so every kernel
//! that CPU has must run there.
//!
//! The kernels: `avx2` (AVX2 with FMA) and `avx512` (AVX-512 F, BW, VL and DQ).

/// The kernel names this module knows.
pub const KERNELS: [&str; 2] = ["avx2", "avx512"];

/// Whether this CPU can run `kernel`.
///
/// # Panics
/// An unknown kernel name.
pub fn cpu_has(kernel: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        match kernel {
            "avx2" => has!("avx2") && has!("fma"),
            "avx512" => has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq"),
            _ => panic!("unknown kernel {kernel:?} (known: {KERNELS:?})"),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        assert!(KERNELS.contains(&kernel), "unknown kernel {kernel:?} (known: {KERNELS:?})");
        false
    }
}

/// Whether `ANIM_SKIP_KERNELS` names `kernel` (or `all`).
pub fn skip_named(kernel: &str) -> bool {
    std::env::var("ANIM_SKIP_KERNELS").is_ok_and(|v| v.split(',').map(str::trim).any(|k| k == kernel || k == "all"))
}

/// Whether a test must run `kernel` now: `true` when this CPU has it (the test then runs it
/// and says so on stderr); `false` when the CPU lacks it and `ANIM_SKIP_KERNELS` names it
/// (the skip is said on stderr).
///
/// # Panics
/// When the CPU lacks `kernel` and `ANIM_SKIP_KERNELS` does not name it: the test would
/// otherwise pass without testing what its name says.
pub fn require(kernel: &str) -> bool {
    if cpu_has(kernel) {
        eprintln!("kernel {kernel}: runs");
        return true;
    }
    if skip_named(kernel) {
        eprintln!("skipped: {kernel} (ANIM_SKIP_KERNELS): this CPU lacks it");
        return false;
    }
    panic!(
        "this CPU lacks the {kernel} kernel, so this test cannot check it; \
         set ANIM_SKIP_KERNELS={kernel} to skip it knowingly"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_kernels_are_answered_and_unknown_ones_refused() {
        for k in KERNELS {
            let _ = cpu_has(k);
        }
        assert!(std::panic::catch_unwind(|| cpu_has("sse9")).is_err());
    }
}
