//! `crowd_report`: GPU time of each crowd pass for crowds of 1k to 1M characters, on every
//! path and texel layout, next to the device's measured copy bandwidth.
//!
//! ```text
//! crowd_report [--model FILE] [--counts 1000,10000,100000,1000000] [--paths book,palette-vertex,palette-compute]
//!              [--layouts model-trs,matrix,dq] [--method lbs|dq] [--frames 9] [--width 1920 --height 1080]
//!              [--copy-mib 1024] [--view overhead|field] [--lod-pixels 1.0 [--lod-ratios 0.5,0.25,0.1]]
//!              [--validation]
//! ```
//!
//! Each configuration renders `--frames` frames (after 3 warm-up frames) of a crowd that
//! fills the view (culling on, every character visible), and prints the median GPU time of
//! each pass from the renderer's timestamp queries: `cull`, `palette` (pose evaluation,
//! palette paths), `skin` (compute skinning, palette-compute) and `draw` (the render pass;
//! on the book path it includes pose evaluation and skinning in the vertex shader). `anim`
//! is pose evaluation plus skinning: `cull + palette + skin` on the palette-compute path.
//!
//! `traffic` is the compulsory memory traffic of the passes that run on their own (list,
//! palette and, on palette-compute, skinning): per character the instance record (read by
//! each pass), the palette (written, then read by the skinning pass) and the skinned
//! vertices written (16 bytes each); the mesh and the atlas are shared by every character
//! and small enough to stay in cache, so they count once. `GB/s` is that traffic over the
//! `anim` time, and `% bw` compares it with the better of two large buffer copies measured
//! in the same run (`vkCmdCopyBuffer` and a compute-shader copy; read + write bytes a
//! second). On the book and palette-vertex paths skinning happens inside the draw, so they
//! get no traffic figure.
//!
//! `tris` is the triangles the frame drew. `--view field` looks across the field from its
//! edge at head height instead of down on it, so most characters are far. With
//! `--lod-pixels P` every row is measured twice: at full detail, and (`+lod`) with mesh
//! levels of detail (`anim_crowd::lod::MeshLods` at `--lod-ratios`) chosen by a projected
//! error of at most `P` pixels; the `+lod` row's `img diff` is the share of pixels whose
//! colour differs (by more than 8 of 255 in a channel) from the full-detail image.
//!
//! Progress (the row being measured, rows done, time elapsed and an estimate of the time
//! left) goes to standard error: a bar on a terminal, plain lines otherwise
//! (`demos::progress`; `ANIM_PROGRESS=0` hides it). Standard output is the report alone.
//!
//! `--model` defaults to the built-in mannequin; the issue's reference is Fox
//! (`--model Fox.glb`: 24 joints, 1,728 vertices, 4 influences).

use anim_core::skin::SkinMethod;

use anim_crowd::atlas::{BakeSettings, TexelFormat, TextureLayout};
use anim_crowd::lod::MeshLods;
use anim_math::Vec3;
use anim_render_vk::{
    Camera, Context, ContextDesc, CrowdDraw, CrowdPath, FrameData, OFFSCREEN_FORMAT, Offscreen, Renderer, RgbaImage,
    measure_compute_copy_bandwidth, measure_copy_bandwidth,
};
use clap::Parser;
use demos::crowd::{CrowdCharacter, grid_half_extent, populate};
use demos::progress::Progress;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(name = "crowd_report", about = "GPU time per crowd pass for 1k to 1M characters, per path and layout")]
struct Args {
    /// glTF character (default: the built-in mannequin).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Crowd sizes.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000,1000000")]
    counts: Vec<u32>,
    /// Paths to measure.
    #[arg(long, value_delimiter = ',', default_value = "book,palette-vertex,palette-compute")]
    paths: Vec<CrowdPath>,
    /// Texel layouts to measure (dq only on rigid skins).
    #[arg(long, value_delimiter = ',', default_value = "model-trs,matrix,dq")]
    layouts: Vec<String>,
    /// Texel precision.
    #[arg(long, default_value = "f32")]
    format: String,
    /// Skinning method.
    #[arg(long, value_parser = demos::method_parser(), default_value = "lbs")]
    method: SkinMethod,
    /// Baking rate, frames a second.
    #[arg(long, default_value_t = 30.0)]
    rate: f32,
    /// Measured frames per configuration (after 3 warm-up frames).
    #[arg(long, default_value_t = 9)]
    frames: u32,
    /// Image width.
    #[arg(long, default_value_t = 1920)]
    width: u32,
    /// Image height.
    #[arg(long, default_value_t = 1080)]
    height: u32,
    /// Size of the buffer copied to measure bandwidth, MiB.
    #[arg(long, default_value_t = 1024)]
    copy_mib: u64,
    /// Characters farther than this from the camera skin with their strongest influence
    /// only (the book's "fewer influences" level of detail).
    #[arg(long)]
    lod_distance: Option<f32>,
    /// `overhead`: looking down on the whole field (every character in view); `field`:
    /// across it from its edge at head height (most characters far).
    #[arg(long, default_value = "overhead")]
    view: String,
    /// Also measure each row with mesh levels of detail picked by at most this projected
    /// error, in pixels.
    #[arg(long)]
    lod_pixels: Option<f32>,
    /// Triangle ratios of the mesh levels of detail after full detail.
    #[arg(long, value_delimiter = ',', default_value = "0.5,0.25,0.1")]
    lod_ratios: Vec<f32>,
    /// Vulkan validation; any message fails the run.
    #[arg(long)]
    validation: bool,
}

type Error = Box<dyn std::error::Error>;

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Compulsory bytes one character moves through memory in the passes outside the draw
/// (see the module docs); `None` where skinning happens in the draw.
fn traffic(path: CrowdPath, method: SkinMethod, joints: u64, vertices: u64) -> Option<u64> {
    let record = 64;
    let entry = match method {
        SkinMethod::Lbs => 48,
        SkinMethod::Dq => 32,
    };
    match path {
        CrowdPath::Book | CrowdPath::PaletteVertex => None,
        // List and palette passes read the record; the palette is written, then read by the
        // skinning pass (with the record), which writes 16-byte vertices.
        CrowdPath::PaletteCompute => Some(3 * record + 2 * joints * entry + vertices * 16),
    }
}

fn run(args: &Args) -> Result<(), Error> {
    let context = Context::new(&ContextDesc { validation: args.validation, window: None })?;
    println!("device: {}", context.device_name());
    let copy_bytes = args.copy_mib * 1024 * 1024;
    let transfer = measure_copy_bandwidth(&context, copy_bytes, 5)?;
    let compute = measure_compute_copy_bandwidth(&context, copy_bytes, 5)?;
    let bandwidth = transfer.max(compute);
    println!(
        "copy bandwidth: vkCmdCopyBuffer {transfer:.1} GB/s, compute-shader copy {compute:.1} GB/s (read + write, {} MiB \
         buffers, medians of 5)",
        args.copy_mib
    );
    let format: TexelFormat = args.format.parse().map_err(|e| format!("--format: {e}"))?;
    let (cc, _) = CrowdCharacter::new(demos::Character::load(args.model.as_deref())?)?;
    let mesh = cc.mesh();
    let (lo, hi) = mesh.bounds().unwrap_or((Vec3::zeros(), Vec3::new(1.0, 1.0, 1.0)));
    let size = (hi - lo).x.max((hi - lo).z).max((hi - lo).y * 0.5);
    let spacing = size * 1.6;
    let influences = mesh.influences.as_ref().map_or(0, |i| i.per_vertex()) as u64;
    println!(
        "character: {}, {} skin joints, {} vertices, {} influences, {} triangles; {} frames measured per row, {}x{}",
        cc.character.name,
        cc.skin().len(),
        mesh.vertex_count(),
        influences,
        mesh.indices.len() / 3,
        args.frames,
        args.width,
        args.height
    );
    println!(
        "{:<9} {:<15} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>9} {:>8} {:>6} {:>8} {:>12} {:>8}",
        "layout",
        "path",
        "count",
        "cull",
        "palette",
        "skin",
        "anim",
        "draw",
        "CPU upd",
        "traffic",
        "GB/s",
        "% bw",
        "visible",
        "tris",
        "img diff"
    );
    let lods = match args.lod_pixels {
        Some(_) => {
            let l = MeshLods::from_mesh(mesh, &args.lod_ratios)?;
            let levels: Vec<String> = l
                .levels()
                .iter()
                .map(|l| format!("{} triangles (error {:.4})", l.indices.len() / 3, l.error))
                .collect();
            println!("mesh levels: {}", levels.join(", "));
            Some(l)
        }
        None => None,
    };
    if !matches!(args.view.as_str(), "overhead" | "field") {
        return Err(format!("--view {}: expected overhead or field", args.view).into());
    }
    // One progress item a row: every layout, count, path and detail variant.
    let per_layout = args.counts.len() * args.paths.len() * if lods.is_some() { 2 } else { 1 };
    let mut progress = Progress::new("crowd_report", args.layouts.len() * per_layout);
    for layout_name in &args.layouts {
        let layout: TextureLayout = layout_name.parse().map_err(|e| format!("--layouts: {e}"))?;
        let atlas = match cc.bake(&BakeSettings { rate: args.rate, layout, format }) {
            Ok(a) => a,
            Err(e) => {
                progress.suspend(|| println!("{layout:<9} skipped: {e}"));
                progress.skip(per_layout);
                continue;
            }
        };
        if args.method == SkinMethod::Dq && !atlas.is_rigid() {
            progress.suspend(|| println!("{layout:<9} skipped: DQ needs a rigid skin"));
            progress.skip(per_layout);
            continue;
        }
        for &count in &args.counts {
            let mut full_image: Option<RgbaImage> = None;
            let half = grid_half_extent(count as usize, spacing) + size;
            // Looking down at the whole field: every character is in view.
            let centre = Vec3::new(0.0, lo.y, 0.0);
            let fov = Camera::default().fov_y;
            let distance = half * std::f32::consts::SQRT_2 / (fov * 0.5).tan() * 1.1;
            let camera = if args.view == "field" {
                // From the field's edge at head height: most characters are far.
                let eye = centre + Vec3::new(0.0, 1.5 * size, half + 2.0 * size);
                Camera { eye, target: centre, near: 0.05 * size, far: 4.0 * half + 10.0 * size, ..Camera::default() }
            } else {
                Camera {
                    eye: centre + Vec3::new(0.0, distance, distance * 0.05),
                    target: centre,
                    near: distance * 0.01,
                    far: distance * 4.0,
                    ..Camera::default()
                }
            };
            let variants = std::iter::once(None).chain(lods.as_ref().zip(args.lod_pixels).map(Some));
            for (&path, lod) in args.paths.iter().flat_map(|p| variants.clone().map(move |l| (p, l))) {
                progress.item(&format!("{layout} {path}{} x{count}", if lod.is_some() { "+lod" } else { "" }));
                // Every row starts from the same crowd, so a row with LODs sees the frames its
                // full-detail row saw.
                let mut crowd = populate(&atlas, count as usize, spacing, 15)?;
                let row = measure(&context, args, &atlas, &cc, &mut crowd, count, path, camera, lod);
                match row {
                    Ok(m) => {
                        let diff = match (&lod, &full_image) {
                            (Some(_), Some(full)) => format!("{:.2}%", image_difference(full, &m.image) * 100.0),
                            _ => "-".to_owned(),
                        };
                        if lod.is_none() {
                            full_image = Some(m.image.clone());
                        }
                        let name = if lod.is_some() { format!("{path}+lod") } else { path.to_string() };
                        let anim = m.cull + m.palette + m.skin;
                        let anim_col =
                            if path == CrowdPath::Book { "in draw".to_owned() } else { format!("{anim:.3}") };
                        let joints = cc.skin().len() as u64;
                        let (bytes, rate, frac) = match traffic(path, args.method, joints, mesh.vertex_count() as u64) {
                            Some(b) => {
                                let bytes = (b * u64::from(count)) as f64;
                                let rate = bytes / (anim * 1e-3) / 1e9;
                                let frac = format!("{:.0}%", rate / bandwidth * 100.0);
                                (format!("{:.3}G", bytes / 1e9), format!("{rate:.0}"), frac)
                            }
                            None => ("-".to_owned(), "-".to_owned(), "-".to_owned()),
                        };
                        progress.suspend(|| println!(
                            "{:<9} {:<15} {:>8} {:>8.3} {:>8.3} {:>8.3} {:>9} {:>9.3} {:>8.3} {:>9} {:>8} {:>6} {:>8} {:>12} {:>8}",
                            layout.to_string(),
                            name,
                            count,
                            m.cull,
                            m.palette,
                            m.skin,
                            anim_col,
                            m.draw,
                            m.cpu,
                            bytes,
                            rate,
                            frac,
                            m.visible.map_or_else(|| "-".to_owned(), |v| v.to_string()),
                            m.triangles.map_or_else(|| "-".to_owned(), |v| v.to_string()),
                            diff
                        ));
                    }
                    Err(e) => progress.suspend(|| {
                        println!("{:<9} {:<15} {:>8} skipped: {e}", layout.to_string(), path.to_string(), count)
                    }),
                }
                progress.inc();
            }
        }
    }
    progress.finish();
    println!("times in ms (GPU medians from timestamp queries; CPU upd: Crowd::update_parallel)");
    if args.validation && context.validation_count() > 0 {
        return Err(format!(
            "{} validation message(s), first: {}",
            context.validation_count(),
            context.validation_messages().first().cloned().unwrap_or_default()
        )
        .into());
    }
    Ok(())
}

struct Measured {
    cull: f64,
    palette: f64,
    skin: f64,
    draw: f64,
    cpu: f64,
    visible: Option<u32>,
    triangles: Option<u64>,
    image: RgbaImage,
}

/// The share of pixels whose largest channel difference exceeds 8.
fn image_difference(a: &RgbaImage, b: &RgbaImage) -> f64 {
    let differing = a
        .pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .filter(|(p, q)| p.iter().zip(*q).any(|(x, y)| x.abs_diff(*y) > 8))
        .count();
    differing as f64 / (a.pixels.len() / 4).max(1) as f64
}

#[allow(clippy::too_many_arguments)]
fn measure(
    context: &std::sync::Arc<Context>,
    args: &Args,
    atlas: &anim_crowd::atlas::AnimAtlas,
    cc: &CrowdCharacter,
    crowd: &mut anim_crowd::crowd::Crowd,
    count: u32,
    path: CrowdPath,
    camera: Camera,
    lod: Option<(&MeshLods, f32)>,
) -> Result<Measured, Error> {
    let mut renderer = Renderer::new(context, OFFSCREEN_FORMAT)?;
    let mut target = Offscreen::new(context, args.width, args.height)?;
    let mesh = cc.upload(&mut renderer, [0.8, 0.72, 0.62])?;
    let id = renderer.add_crowd(mesh, atlas, count)?;
    if let Some((lods, _)) = lod {
        renderer.set_crowd_lods(id, lods)?;
    }
    let mut frame = FrameData { camera, ..FrameData::default() };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut cull, mut palette, mut skin, mut draw, mut cpu) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut visible, mut triangles) = (None, None);
    for i in 0..args.frames + 3 {
        let start = Instant::now();
        crowd.update_parallel(1.0 / 60.0, threads);
        let cpu_ms = start.elapsed().as_secs_f64() * 1e3;
        renderer.set_crowd_instances(id, crowd.instances())?;
        frame.clear();
        frame.add_crowd(CrowdDraw {
            crowd: id,
            path,
            method: args.method,
            cull: true,
            lod_distance: args.lod_distance,
            tint: [1.0; 3],
            lod_pixels: lod.map(|(_, p)| p),
        });
        target.render(&mut renderer, &frame)?;
        if i < 3 {
            continue;
        }
        let stats = renderer.frame_stats().ok_or("the device has no timestamp queries")?;
        cull.push(stats.pass("cull").unwrap_or(0.0));
        palette.push(stats.pass("palette").unwrap_or(0.0));
        skin.push(stats.pass("skin").unwrap_or(0.0));
        draw.push(stats.pass("draw").unwrap_or(0.0));
        cpu.push(cpu_ms);
        visible = renderer.crowd_visible(id);
        triangles = renderer.crowd_triangles(id);
    }
    Ok(Measured {
        cull: median(&mut cull),
        palette: median(&mut palette),
        skin: median(&mut skin),
        draw: median(&mut draw),
        cpu: median(&mut cpu),
        visible,
        triangles,
        image: target.image()?,
    })
}

fn main() -> ExitCode {
    let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).try_init();
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crowd_report: {e}");
            ExitCode::FAILURE
        }
    }
}
