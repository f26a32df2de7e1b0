//! Morph + skin throughput (vertices/s): morph targets applied into caller-owned buffers
//! (`MorphTargets::apply`), then linear blend skinning with normals, for 0, 4 and 16 active
//! targets out of 32 on a 10,000-vertex mesh with 4 influences a vertex. With 0 active
//! targets the morph step is a copy of the base attributes.
//!
//! Run: `cargo bench -p benches --bench morph`.

use anim_core::clip::TimePolicy;
use anim_core::skin::palette::skinning_matrices;
use anim_core::skin::skinning::{NormalMode, SkinningInput, SkinningOutput, linear_blend};
use anim_core::skin::{MorphTargets, Skin};
use anim_math::{Mat4, Vec3};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

const JOINTS: usize = 80;
const VERTICES: usize = 10_000;
const TARGETS: usize = 32;

/// `TARGETS` targets of small deterministic position and normal deltas.
fn targets(n: usize) -> MorphTargets {
    let delta = |t: usize, v: usize, k: usize| ((t * 31 + v * 17 + k * 7) % 101) as f32 * 1e-4 - 5e-3;
    let set = |k: usize| -> Vec<Vec<Vec3>> {
        (0..TARGETS)
            .map(|t| (0..n).map(|v| Vec3::new(delta(t, v, k), delta(t, v, k + 1), delta(t, v, k + 2))).collect())
            .collect()
    };
    MorphTargets::new(n, TARGETS)
        .with_positions(set(0))
        .and_then(|m| m.with_normals(set(3)))
        .expect("one delta a vertex and target, all finite")
}

fn morph_skin(c: &mut Criterion) {
    let skeleton = benches::skeleton(JOINTS);
    let clip = benches::clip(&skeleton, 4.0, 30.0);
    let mut pose = skeleton.rest_pose().clone();
    clip.sample(2.1, TimePolicy::Clamp, &mut pose).expect("pose fits the clip");
    let skin = Skin::from_skeleton(&skeleton);
    let mut model = vec![Mat4::identity(); JOINTS];
    pose.local_to_model(&skeleton, &mut model).expect("lengths match");
    let mut pal = vec![Mat4::identity(); JOINTS];
    skinning_matrices(&model, &skin, &mut pal).expect("skin fits");
    let (pos, nrm, inf) = benches::mesh(VERTICES, 4, JOINTS);
    let morph = targets(VERTICES);
    // Caller-owned buffers: the morphed bind pose and the skinned output.
    let (mut mp, mut mn) = (vec![Vec3::zeros(); VERTICES], vec![Vec3::zeros(); VERTICES]);
    let (mut out_p, mut out_n) = (vec![Vec3::zeros(); VERTICES], vec![Vec3::zeros(); VERTICES]);
    let mut g = c.benchmark_group("morph_skin");
    g.throughput(Throughput::Elements(VERTICES as u64));
    for active in [0usize, 4, 16] {
        // Every other target active, so the active ones are not contiguous.
        let weights: Vec<f32> = (0..TARGETS).map(|t| if t % 2 == 0 && t / 2 < active { 0.3 } else { 0.0 }).collect();
        g.bench_with_input(BenchmarkId::new("lbs_pos_nrm", active), &active, |b, _| {
            b.iter(|| {
                morph.apply(black_box(&weights), &pos, &mut mp, Some((&nrm, &mut mn))).expect("lengths match");
                let input = SkinningInput { influences: &inf, positions: &mp, normals: Some(&mn) };
                let mut out = SkinningOutput { positions: &mut out_p, normals: Some(&mut out_n) };
                linear_blend(&input, black_box(&pal), NormalMode::Direct, &mut out).expect("valid input");
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = morph_skin
}
criterion_main!(benches);
