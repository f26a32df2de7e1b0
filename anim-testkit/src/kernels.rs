//! Which SIMD kernels a test runs: a test named for a kernel runs it or fails, so that on a
//! CPU without the kernel it cannot pass by comparing the scalar loop with itself.
//!
//! The one way out is explicit: `ANIM_SKIP_KERNELS`, a comma-separated list of kernel
//! names (`avx2`, `avx512`) or `all`. A kernel the CPU lacks is skipped, saying so, only
//! when the list names it; a kernel the CPU has always runs, whatever the list says. CI
//! (`.ci/run`) sets the list to exactly the kernels its CPU lacks, read from the CPU flags,
//! with this file's table of kernels and features.

/// The environment variable naming the kernels a test may skip.
pub const SKIP_VAR: &str = "ANIM_SKIP_KERNELS";

/// Every kernel name `ANIM_SKIP_KERNELS` may hold (besides `all`), with the CPU features each
/// needs; `.ci/run` reads the same features from the CPU.
pub const KERNELS: [(&str, &[&str]); 2] =
    [("avx2", &["avx2", "fma"]), ("avx512", &["avx512f", "avx512bw", "avx512vl", "avx512dq"])];

/// True when this CPU has every feature kernel `name` needs.
///
/// # Panics
/// When `name` is not in [`KERNELS`].
#[must_use]
pub fn cpu_has(name: &str) -> bool {
    let (_, features) = KERNELS.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("unknown kernel {name:?}"));
    features.iter().all(|f| cpu_feature(f))
}

#[cfg(target_arch = "x86_64")]
fn cpu_feature(f: &str) -> bool {
    match f {
        "avx2" => std::arch::is_x86_feature_detected!("avx2"),
        "fma" => std::arch::is_x86_feature_detected!("fma"),
        "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
        "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
        "avx512vl" => std::arch::is_x86_feature_detected!("avx512vl"),
        "avx512dq" => std::arch::is_x86_feature_detected!("avx512dq"),
        _ => panic!("unknown CPU feature {f:?}"),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_feature(_: &str) -> bool {
    false
}

/// The policy without the environment: `Ok(true)` runs the kernel, `Ok(false)` skips it,
/// `Err` says why the test must fail. `skip` is the value of `ANIM_SKIP_KERNELS`, if set.
pub fn decide(name: &str, cpu_has: bool, skip: Option<&str>) -> Result<bool, String> {
    let listed: Vec<&str> = skip.unwrap_or("").split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
    if let Some(unknown) = listed.iter().find(|n| **n != "all" && !KERNELS.iter().any(|(k, _)| k == *n)) {
        let known: Vec<&str> = KERNELS.iter().map(|(k, _)| *k).collect();
        return Err(format!("{SKIP_VAR} names {unknown:?}, which is no kernel (known: {}, all)", known.join(", ")));
    }
    if cpu_has {
        return Ok(true);
    }
    if listed.iter().any(|n| *n == name || *n == "all") {
        return Ok(false);
    }
    Err(format!("this CPU lacks the {name} kernel; {SKIP_VAR}={name} skips it"))
}

/// Whether the calling test runs kernel `name` (one of [`KERNELS`]), which the CPU has when
/// `cpu_has`: true when it has it; when it lacks it and `ANIM_SKIP_KERNELS` names it (or
/// `all`), prints `skipped: NAME (ANIM_SKIP_KERNELS)` to stderr and returns false.
///
/// # Panics
/// When the CPU lacks the kernel and `ANIM_SKIP_KERNELS` does not name it, or names
/// something that is no kernel.
pub fn require_kernel(name: &str, cpu_has: bool) -> bool {
    let skip = std::env::var(SKIP_VAR).ok();
    match decide(name, cpu_has, skip.as_deref()) {
        Ok(true) => true,
        Ok(false) => {
            eprintln!("skipped: {name} ({SKIP_VAR})");
            false
        }
        Err(why) => panic!("{why}"),
    }
}

/// [`require_kernel`] with the CPU's own answer ([`cpu_has`]); says on stderr that the
/// kernel runs when it does.
///
/// # Panics
/// As [`require_kernel`].
pub fn require(name: &str) -> bool {
    let run = require_kernel(name, cpu_has(name));
    if run {
        eprintln!("kernel {name}: runs");
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The skip policy itself: a kernel the CPU has always runs; one it lacks is skipped
    /// only when the list names it or says `all`; a name that is no kernel is an error.
    #[test]
    fn kernel_skip_policy() {
        assert_eq!(decide("avx2", true, None), Ok(true));
        assert_eq!(decide("avx2", true, Some("avx2")), Ok(true), "a kernel the CPU has is never skipped");
        assert_eq!(decide("avx2", false, Some("avx2")), Ok(false));
        assert_eq!(decide("avx2", false, Some("avx512, avx2")), Ok(false));
        assert_eq!(decide("avx512", false, Some("all")), Ok(false));
        assert_eq!(
            decide("avx512", false, Some("")),
            Err("this CPU lacks the avx512 kernel; ANIM_SKIP_KERNELS=avx512 skips it".into())
        );
        assert!(decide("avx2", false, None).unwrap_err().contains("ANIM_SKIP_KERNELS=avx2"));
        assert!(decide("avx2", false, Some("avx512")).is_err());
        assert!(decide("avx2", true, Some("avx-2")).unwrap_err().contains("no kernel"));
    }

    #[test]
    fn known_kernels_are_answered_and_unknown_ones_refused() {
        for (k, _) in KERNELS {
            let _ = cpu_has(k);
        }
        assert!(std::panic::catch_unwind(|| cpu_has("sse9")).is_err());
    }
}
