// The mannequin's clips on another humanoid: CesiumMan from the shared assets when they
// are next to the repository, else the mannequin 20% taller. Each clip is retargeted
// offline at 30 frames a second; the report gives its frames and how far the planted feet
// are from where the scaled source put them. `cargo run -p anim-retarget --example retarget`.
use anim_core::pose::{JointDesc, Skeleton};
use anim_math::Transform;
use anim_retarget::{HumanoidRig, OfflineSettings, Reference, RetargetSettings, Retargeter, auto_map};

/// One retargeted clip: its name, frames, duration and contact error (target units).
pub struct Line {
    pub name: String,
    pub frames: usize,
    pub duration: f32,
    pub contact_error: f32,
}

/// The target's name, its leg-length ratio to the mannequin, and a line per clip.
pub fn run() -> Result<(String, f32, Vec<Line>), Box<dyn std::error::Error>> {
    let man = anim_gltf::mannequin_model();
    let source = HumanoidRig::new(&man.skeleton, auto_map(&man.skeleton).map, Reference::Bind(&man.skins[0].skin))?;
    let cesium = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets/CesiumMan/CesiumMan.glb");
    let (name, target) = if std::path::Path::new(cesium).exists() {
        let model = anim_gltf::load(cesium)?;
        let map = auto_map(&model.skeleton).map;
        ("CesiumMan".to_owned(), HumanoidRig::new(&model.skeleton, map, Reference::Bind(&model.skins[0].skin))?)
    } else {
        let s = &man.skeleton;
        let tall = Skeleton::new(
            (0..s.len())
                .map(|j| {
                    let rest = s.rest_pose().locals()[j];
                    let t = Transform { translation: rest.translation * 1.2, ..rest };
                    JointDesc::new(s.name(j).unwrap_or(""), s.parent(j), t)
                })
                .collect(),
        )?;
        let map = auto_map(&tall).map;
        ("tall mannequin".to_owned(), HumanoidRig::new(&tall, map, Reference::Rest)?)
    };
    let retargeter = Retargeter::new(&source, &target, RetargetSettings::default())?;
    let mut lines = Vec::new();
    for clip in &man.clips {
        let out = anim_retarget::retarget_clip(&retargeter, clip, &OfflineSettings::default(), &[])?;
        lines.push(Line {
            name: clip.name().to_owned(),
            frames: out.report.frames,
            duration: out.clip.duration(),
            contact_error: out.report.contact_error,
        });
    }
    Ok((name, retargeter.leg_ratio(), lines))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (target, ratio, lines) = run()?;
    println!("mannequin → {target} (leg-length ratio {ratio:.3})");
    for l in &lines {
        println!("{:>8}: {} frames, {:.3} s, contact error {:.5}", l.name, l.frames, l.duration, l.contact_error);
    }
    Ok(())
}
