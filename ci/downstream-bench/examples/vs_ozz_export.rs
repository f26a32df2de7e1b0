//! Writes what the ozz-animation side of `scripts/vs-ozz.sh` needs and cannot make from
//! the glTF file alone, so that both programs run the same workloads on the same data:
//! Fox's skinned mesh (positions, smooth normals, four joints and weights a vertex) and its
//! matrix palettes (Walk at 0.3 s, and at 100 times for the crowd of meshes), and the
//! two-bone and aim IK setups of `benches::{TwoBoneSetup, AimSetup}`.
//!
//! Run: `cargo run --release --manifest-path ci/downstream-bench/Cargo.toml --example
//! vs_ozz_export -- OUT_FILE`. The file is little-endian: `u32` counts, `f32` values,
//! `u16` joint indices (padded to four bytes), in the order `scripts/vs-ozz/driver.cc`
//! reads them.

use anim_core::clip::TimePolicy;
use anim_core::skin::palette::skinning_matrices;
use anim_math::{Mat4, Quat, Transform, Vec3};
use benches::{AimSetup, TwoBoneSetup};
use std::io::Write;

/// Meshes in the crowd workload (as `vs_ozz` and `skinning`).
const MESHES: usize = 100;

struct Out(Vec<u8>);

impl Out {
    fn u32(&mut self, v: usize) {
        self.0.extend_from_slice(&u32::try_from(v).expect("counts fit u32").to_le_bytes());
    }
    fn f32s(&mut self, v: &[f32]) {
        v.iter().for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
    }
    fn vec3(&mut self, v: &Vec3) {
        self.f32s(&[v.x, v.y, v.z]);
    }
    fn transform(&mut self, t: &Transform) {
        self.vec3(&t.translation);
        let q: &Quat = &t.rotation;
        self.f32s(&[q.i, q.j, q.k, q.w]);
        self.vec3(&t.scale);
    }
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: vs_ozz_export OUT_FILE");
    let model = anim_gltf::load(benches::shared_asset("Fox/Fox.glb")).expect("the shared Fox model loads");
    let rt = model.runtime_skeleton().expect("an imported model is consistent");
    let walk = &rt.clips[model.find_clip("Walk").expect("Fox has a Walk clip")];
    let instance = model.meshes.iter().find(|m| m.skin == Some(0)).expect("Fox has a skinned mesh");
    let mesh = &instance.data;
    let skin = &rt.skins[0];
    let influences = mesh.influences.as_ref().expect("a skinned mesh has influences");
    assert_eq!(influences.per_vertex(), 4, "Fox has four influences a vertex");
    let normals = if mesh.normals.is_empty() { mesh.smooth_normals() } else { mesh.normals.clone() };
    let times: Vec<f32> =
        std::iter::once(0.3).chain((0..MESHES).map(|i| i as f32 * walk.duration() / MESHES as f32)).collect();
    let mut out = Out(Vec::new());
    let v = mesh.positions.len();
    out.u32(v);
    out.u32(4);
    out.u32(skin.len());
    out.u32(times.len());
    mesh.positions.iter().for_each(|p| out.vec3(p));
    normals.iter().for_each(|n| out.vec3(n));
    for j in influences.joints() {
        out.0.extend_from_slice(&j.to_le_bytes());
    }
    if (4 * v) % 2 == 1 {
        out.0.extend_from_slice(&[0, 0]);
    }
    out.f32s(influences.weights());
    let mut pose = rt.skeleton.rest_pose().clone();
    let mut model_m = vec![Mat4::identity(); rt.skeleton.len()];
    let mut palette = vec![Mat4::identity(); skin.len()];
    for t in times {
        walk.sample(t, TimePolicy::Wrap, &mut pose).expect("Walk fits Fox");
        pose.local_to_model(&rt.skeleton, &mut model_m).expect("lengths match");
        skinning_matrices(&model_m, skin, &mut palette).expect("the skin fits its skeleton");
        palette.iter().for_each(|m| out.f32s(m.as_slice()));
    }
    let TwoBoneSetup { parent, upper, middle, end, targets, pole } = TwoBoneSetup::new();
    [parent, upper, middle].iter().for_each(|t| out.transform(t));
    out.vec3(&end);
    out.vec3(&pole);
    out.u32(targets.len());
    targets.iter().for_each(|t| out.vec3(t));
    let AimSetup { neck, head, looks, forward, up, world_up } = AimSetup::new();
    [neck, head].iter().for_each(|t| out.transform(t));
    [forward, up, world_up].iter().for_each(|v| out.vec3(v));
    out.u32(looks.len());
    looks.iter().for_each(|t| out.vec3(t));
    std::fs::File::create(&path).and_then(|mut f| f.write_all(&out.0)).unwrap_or_else(|e| panic!("{path}: {e}"));
    println!("{path}: {v} vertices, {} palettes of {} joints", MESHES + 1, skin.len());
}
