//! Sampling cost of every clip of every shared skinned asset (the models of the runtime-clip
//! report, `docs/runtime-clips.md`): looping forward playback at 60 Hz, one context kept,
//! of the clip compiled to a runtime clip at 1 mm at the skin (`runtime`) and of exact glTF
//! sampling (`exact`, `Clip::sample_cached`); per call.
//!
//! Ids are `clip/<asset>/<clip>/<path>`, the clip named as gltf2ozz names its output file
//! (the animation's name, or `animation_<index>` for an unnamed one), so that
//! `scripts/vs-ozz.sh` sets each next to ozz-animation's sampling of the same clip.
//!
//! Run: `cargo bench -p benches --bench per_clip`.

use anim_core::clip::{Clip, RuntimeClip, SamplingCache, SoaSampler, TimePolicy};
use anim_core::offline::JointRadii;
use anim_core::pose::soa::SoaPose;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

/// The shared assets with a skin and animations.
const ASSETS: [&str; 7] = [
    "Fox/Fox.glb",
    "CesiumMan/CesiumMan.glb",
    "Woman/Woman.gltf",
    "RiggedFigure/RiggedFigure.glb",
    "RiggedSimple/RiggedSimple.glb",
    "SimpleSkin/SimpleSkin.gltf",
    "DQ/dq.gltf",
];

fn per_clip(c: &mut Criterion) {
    let mut g = c.benchmark_group("per_clip");
    g.sample_size(20);
    for rel in ASSETS {
        let model = anim_gltf::load(benches::shared_asset(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let rt = model.runtime_skeleton().expect("an imported model is consistent");
        let meshes: Vec<_> = model.meshes.iter().filter(|m| m.skin == Some(0)).map(|m| &m.data).collect();
        let radii = JointRadii::from_skin(&rt.skeleton, &rt.skins[0], &meshes).expect("invertible binds");
        let asset = rel.split('/').next().expect("a folder");
        for (i, clip) in rt.clips.iter().enumerate() {
            let clip = Clip::clone(clip);
            let name = if clip.name().is_empty() { format!("animation_{i}") } else { clip.name().to_owned() };
            let runtime = RuntimeClip::compile(&clip, &rt.skeleton, &radii, 0.001).expect("the clip fits");
            let d = clip.duration();
            let step = |t: &mut f32| {
                *t = TimePolicy::Wrap.apply(*t + 1.0 / 60.0, d);
                *t
            };
            let mut ctx = runtime.new_context();
            let mut soa = SoaPose::from_pose(rt.skeleton.rest_pose());
            let mut t = 0.0;
            g.bench_function(format!("clip/{asset}/{name}/runtime"), |b| {
                b.iter(|| {
                    runtime.sample_soa(&mut ctx, black_box(step(&mut t)), TimePolicy::Clamp, &mut soa).expect("fits")
                })
            });
            let mut cache = SamplingCache::new(&clip);
            let mut pose = rt.skeleton.rest_pose().clone();
            let mut t = 0.0;
            g.bench_function(format!("clip/{asset}/{name}/exact"), |b| {
                b.iter(|| {
                    clip.sample_cached(&mut cache, black_box(step(&mut t)), TimePolicy::Wrap, &mut pose).expect("fits")
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, per_clip);
criterion_main!(benches);
