//! [`Kernel`]: which skinning loop runs, and whether this CPU has it.

/// Which loop a skinning call runs. [`Kernel::best`] is what the plain functions use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Portable scalar loops (any CPU).
    Scalar,
    /// 256-bit loops with fused multiply-add (x86-64 with AVX2 and FMA).
    Avx2Fma,
    /// 512-bit loops, sixteen vertices a step (x86-64 with AVX-512 F, VL, BW and DQ, plus
    /// AVX2 and FMA).
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU runs (detected at run time, cached by the standard library).
    #[must_use]
    pub fn best() -> Self {
        if Self::Avx512.available() {
            Self::Avx512
        } else if Self::Avx2Fma.available() {
            Self::Avx2Fma
        } else {
            Self::Scalar
        }
    }

    /// True when this CPU can run the kernel.
    #[must_use]
    pub fn available(self) -> bool {
        match self {
            Self::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Self::Avx2Fma => std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => {
                Self::Avx2Fma.available()
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512dq")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Self::Avx2Fma | Self::Avx512 => false,
        }
    }
}
