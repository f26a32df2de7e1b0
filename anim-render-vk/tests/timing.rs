//! GPU timing: the copy-bandwidth probes (`vkCmdCopyBuffer` and the compute-shader copy) on
//! lavapipe (a finite positive figure, typed errors for sizes they cannot allocate or bind,
//! no validation message) and the one-line `FrameStats` summary. The crate-private
//! `GpuTimer`, and that both probes copy every byte, are tested inside `src/timing.rs`.

mod common;

use anim_render_vk::timing::measure_compute_copy_bandwidth;
use anim_render_vk::{FrameStats, PassTime, RenderError, measure_copy_bandwidth};

const MIB: u64 = 1 << 20;

#[test]
fn copy_bandwidth_is_finite_and_positive() {
    let ctx = common::context();
    let gbs = measure_copy_bandwidth(&ctx, 64 * MIB, 3).unwrap();
    assert!(gbs.is_finite() && gbs > 0.0, "{gbs} GB/s");
    println!("{}: copy bandwidth (read + write) {gbs:.2} GB/s", ctx.device_name());
    // An odd size (not a multiple of 4) and a single repeat work too.
    let small = measure_copy_bandwidth(&ctx, MIB + 3, 1).unwrap();
    assert!(small.is_finite() && small > 0.0, "{small} GB/s");
    common::assert_clean(&ctx);
}

#[test]
fn copy_bandwidth_rejects_bad_sizes_with_errors() {
    let ctx = common::context();
    assert!(matches!(measure_copy_bandwidth(&ctx, 0, 3), Err(RenderError::Input(_))));
    assert!(matches!(measure_copy_bandwidth(&ctx, MIB, 0), Err(RenderError::Input(_))));
    assert!(matches!(measure_copy_bandwidth(&ctx, MIB, 100_000), Err(RenderError::Input(_))));
    // Sizes beyond the device's limits are refused before any Vulkan call (no validation
    // message about an oversized buffer or allocation).
    for bytes in [1 << 50, u64::MAX] {
        let huge = measure_copy_bandwidth(&ctx, bytes, 3);
        assert!(matches!(huge, Err(RenderError::Input(_))), "{huge:?}");
    }
    // The context still works after the refusals.
    assert!(measure_copy_bandwidth(&ctx, 4 * MIB, 1).unwrap() > 0.0);
    common::assert_clean(&ctx);
}

#[test]
fn compute_copy_bandwidth_is_finite_and_positive() {
    let ctx = common::context();
    let compute = measure_compute_copy_bandwidth(&ctx, 64 * MIB, 3).unwrap();
    assert!(compute.is_finite() && compute > 0.0, "{compute} GB/s");
    let transfer = measure_copy_bandwidth(&ctx, 64 * MIB, 3).unwrap();
    println!(
        "{}: 64 MiB copy bandwidth (read + write): vkCmdCopyBuffer {transfer:.2} GB/s, compute shader \
         {compute:.2} GB/s, achievable (the larger) {:.2} GB/s",
        ctx.device_name(),
        transfer.max(compute)
    );
    // An odd size (not a multiple of 16) and a single repeat work too.
    let small = measure_compute_copy_bandwidth(&ctx, MIB + 3, 1).unwrap();
    assert!(small.is_finite() && small > 0.0, "{small} GB/s");
    common::assert_clean(&ctx);
}

#[test]
fn compute_copy_bandwidth_rejects_bad_sizes_with_errors() {
    let ctx = common::context();
    assert!(matches!(measure_compute_copy_bandwidth(&ctx, 0, 3), Err(RenderError::Input(_))));
    assert!(matches!(measure_compute_copy_bandwidth(&ctx, MIB, 0), Err(RenderError::Input(_))));
    assert!(matches!(measure_compute_copy_bandwidth(&ctx, MIB, 100_000), Err(RenderError::Input(_))));
    // Past maxStorageBufferRange (one descriptor must cover each buffer) and past every
    // size limit: refused before any Vulkan call (no validation message).
    let range = u64::from(ctx.limits().max_storage_buffer_range);
    for bytes in [range + 1, 1 << 50, u64::MAX - 7, u64::MAX] {
        let huge = measure_compute_copy_bandwidth(&ctx, bytes, 3);
        assert!(matches!(huge, Err(RenderError::Input(_))), "{bytes}: {huge:?}");
    }
    // The context still works after the refusals.
    assert!(measure_compute_copy_bandwidth(&ctx, 4 * MIB, 1).unwrap() > 0.0);
    common::assert_clean(&ctx);
}

#[test]
fn frame_stats_summary_and_total() {
    let stats = FrameStats {
        passes: vec![
            PassTime { name: "cull", ms: 0.012 },
            PassTime { name: "palette", ms: 0.310 },
            PassTime { name: "draw", ms: 1.2 },
        ],
        instances: 1000,
        visible: Some(812),
    };
    assert!((stats.gpu_ms() - 1.522).abs() < 1e-12);
    assert_eq!(stats.pass("palette"), Some(0.310));
    assert_eq!(stats.pass("skin"), None);
    assert_eq!(
        stats.to_string(),
        "cull 0.012 ms · palette 0.310 ms · draw 1.200 ms · total 1.522 ms · 812/1000 visible"
    );
    let unculled = FrameStats { visible: None, ..stats.clone() };
    assert!(unculled.to_string().ends_with("total 1.522 ms · 1000 instances"), "{unculled}");
    // Repeated names add up.
    let twice = FrameStats {
        passes: vec![PassTime { name: "draw", ms: 1.0 }, PassTime { name: "draw", ms: 0.5 }],
        ..Default::default()
    };
    assert_eq!(twice.pass("draw"), Some(1.5));
    // No timings (a queue without timestamps): just the total.
    let empty = FrameStats::default();
    assert_eq!(empty.gpu_ms(), 0.0);
    assert_eq!(empty.to_string(), "total 0.000 ms");
}
