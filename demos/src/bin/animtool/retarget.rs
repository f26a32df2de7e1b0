//! `animtool retarget SRC --clip NAME|all --onto DST --out OUT.glb [--map-src FILE]
//! [--map-dst FILE] [--rate HZ]`: the source's clips retargeted onto the target character,
//! written with it as binary glTF; prints both mappings and, per clip, its frames, where
//! its contacts came from and the contact error. Progress (the clip being retargeted) goes to
//! stderr (`demos::progress`).

use demos::progress::Progress;
use demos::retarget::{Humanoid, export, retarget_clips_with_progress};
use std::path::PathBuf;

/// Retarget clips from one humanoid onto another and write the target with them as .glb.
#[derive(clap::Args)]
pub struct RetargetArgs {
    /// The source: a .gltf or .glb file, or `default` for the built-in mannequin.
    src: String,
    /// Clip name or index, or `all`.
    #[arg(long, default_value = "all")]
    clip: String,
    /// The target character: a .gltf or .glb file, or `default`.
    #[arg(long)]
    onto: String,
    /// Output .glb path.
    #[arg(long)]
    out: PathBuf,
    /// Humanoid map file for the source (see `anim_retarget::file`); default: by name.
    #[arg(long)]
    map_src: Option<PathBuf>,
    /// Humanoid map file for the target; default: by name.
    #[arg(long)]
    map_dst: Option<PathBuf>,
    /// Samples a second of the retargeted clips.
    #[arg(long, default_value_t = 30.0)]
    rate: f32,
}

/// Runs the subcommand.
pub fn run(a: &RetargetArgs) -> Result<(), String> {
    let source = Humanoid::load(&a.src, a.map_src.as_deref()).map_err(|e| format!("{}: {e}", a.src))?;
    let target = Humanoid::load(&a.onto, a.map_dst.as_deref()).map_err(|e| format!("{}: {e}", a.onto))?;
    let clips: Vec<usize> = if a.clip == "all" {
        (0..source.model.clips.len()).collect()
    } else {
        vec![super::find_clip(&source.model, &a.clip)?]
    };
    if clips.is_empty() {
        return Err(format!("{}: no clip to retarget", a.src));
    }
    for h in [&source, &target] {
        let how = if h.auto.is_some() { "by name" } else { "from the map file" };
        println!("{} ({how}, hips height {:.4}):", h.name, h.rig.hips_height());
        for line in h.mapping_lines() {
            println!("  {line}");
        }
    }
    let mut progress = Progress::new("retarget", clips.len());
    let names: Vec<&str> = clips.iter().map(|&i| source.model.clips[i].name()).collect();
    let (rt, out) = retarget_clips_with_progress(&source, &target, &clips, a.rate, &mut |k| {
        super::next_clip(&mut progress, k, names[k])
    })
    .map_err(|e| e.to_string())?;
    progress.inc();
    progress.finish();
    println!("leg ratio {:.4}, hips and root motion scaled by {:.4?}", rt.leg_ratio(), rt.scale().as_slice());
    for r in &out {
        let found: Vec<String> = r.report.found[..2].iter().map(|f| format!("{f:?}").to_lowercase()).collect();
        println!(
            "  clip {:?}: {} frames, contacts {}, contact error {:.5} ({:.2} mm on a 1 m leg), lowest foot joint {:.5}",
            r.clip.name(),
            r.report.frames,
            found.join("/"),
            r.report.contact_error,
            1000.0 * r.report.contact_error / target.rig.hips_height(),
            r.report.lowest_foot,
        );
    }
    let clips: Vec<_> = out.into_iter().map(|r| r.clip).collect();
    let bytes = export(&target.model, &clips).map_err(|e| e.to_string())?;
    std::fs::write(&a.out, &bytes).map_err(|e| format!("{}: {e}", a.out.display()))?;
    println!("{}: {} clip(s), {} bytes", a.out.display(), clips.len(), bytes.len());
    Ok(())
}
