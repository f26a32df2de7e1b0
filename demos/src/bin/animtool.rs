//! `animtool`: shows and dumps what the runtime computes for a glTF file.
//!
//! ```text
//! animtool inspect FILE
//! animtool sample FILE --clip NAME|INDEX --time T [--time-policy clamp|wrap]
//! animtool skin FILE [--clip NAME|INDEX | --rest] --times T0,T1,…|keys|mid [--time-policy clamp|wrap]
//!               [--method lbs|dq] [--backend cpu|gpu] [--normals] --out OUT.json [--bin OUT.bin]
//! animtool export-default OUT.glb
//! animtool bake FILE --rate HZ --out OUT.atlas [--layout model-trs|matrix|dq] [--format f32|f16]
//!               [--clamp]
//! animtool compress FILE [--tolerance-mm X]
//! animtool graph GRAPH.json --model FILE|default --inputs INPUTS.json --rate HZ --out TRACE.json
//! ```
//!
//! `graph` plays an animation graph over a timeline of parameter changes and writes each
//! frame's states, joint positions, root motion and events (`demos::graph_tool`).
//!
//! `compress` compiles every clip into an `anim_core::clip::RuntimeClip` at the tolerance (in
//! millimetres at the skin; glTF units are metres) and prints, per clip, the glTF key data
//! size, the runtime clip's bytes and the largest skinned-position deviation from exact
//! sampling (every 1/120 s and every key time), in mm and as a fraction of the bind-pose
//! bounding-box diagonal.
//!
//! `bake` writes every clip of the file's first skinned mesh into one animation atlas in
//! the format of `anim_crowd::atlas` (documented there), which `ch15_crowd
//! --anim-texture OUT.atlas --model FILE` loads, and prints each clip's place in it and the
//! bake error (the largest skinned-position deviation from exact sampling, as a fraction
//! of the bind-pose bounding-box diagonal).
//!
//! `skin` writes
//! `{"model", "clip": {"index", "name", "duration"} | null, "method", "backend", "samples": [{"time",
//! "skins": [{"skin", "jointWorld": [[16 floats, column-major] per joint in skin.joints order]}],
//! "primitives": [{"node", "mesh", "primitive", "skinned", "positions", "normals"}]}]}`;
//! one primitive entry per mesh instance of the default scene, ordered by node then primitive,
//! vertices in `POSITION` order. Numbers are f32 values (shortest decimal that reads back
//! to the same f32). With `--bin`, `positions`/`normals` are `{"binOffset": BYTES, "length":
//! FLOATS}` into a little-endian f32 file.
//!
//! Every command writes its output as it goes, through a buffered writer (never the whole
//! document in memory), and keeps nothing larger than the model it loaded: output of any
//! size takes constant extra memory. `inspect` indents the node tree by depth up to
//! [`MAX_INDENT`] levels and writes deeper levels' depth as a number, so each line stays
//! short however deep the hierarchy.
//!
//! `bake`, `compress` and `retarget` show their progress (the clip being worked on, clips
//! done, time elapsed and an estimate of the time left) on standard error: a bar on a
//! terminal, plain lines otherwise (`demos::progress`; `ANIM_PROGRESS=0` hides it,
//! `ANIM_PROGRESS=plain` asks for lines on a terminal too). Standard output is unchanged.

use anim_core::clip::TimePolicy;
use anim_core::pose::Pose;
use anim_core::skin::{Skin, SkinMethod};
use anim_crowd::atlas::{AnimAtlas, AtlasSource, BakeSettings, TexelFormat, TextureLayout};
use anim_gltf::{Model, SkinScratch};
use anim_math::{Mat4, Vec3};
use clap::{Parser, Subcommand, ValueEnum};
use demos::Backend;
use demos::crowd::CrowdCharacter;
use demos::progress::Progress;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[path = "animtool/retarget.rs"]
mod retarget;

#[derive(Parser)]
#[command(
    name = "animtool",
    version,
    about = "Inspect, sample and skin glTF characters with the anim runtime",
    after_help = "bake, compress and retarget show progress on stderr: a bar on a terminal, plain lines \
                  otherwise (ANIM_PROGRESS=0 hides it, ANIM_PROGRESS=plain asks for lines)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the node tree (joints marked), skins, primitives with influence histograms,
    /// clips with their channels, and import warnings.
    Inspect {
        /// A .gltf or .glb file.
        file: PathBuf,
    },
    /// Print every node's world matrix (column-major) at one time of one clip, as JSON.
    Sample {
        /// A .gltf or .glb file.
        file: PathBuf,
        /// Clip name or index.
        #[arg(long)]
        clip: String,
        /// Time in the file's raw seconds.
        #[arg(long, allow_hyphen_values = true)]
        time: f32,
        /// How times outside [0, duration] are handled.
        #[arg(long, value_enum, default_value_t = Policy::Clamp)]
        time_policy: Policy,
    },
    /// Skin every mesh instance of the default scene at the given times and write JSON.
    Skin(SkinArgs),
    /// Write the built-in mannequin (skeleton, skinned mesh, clips, foot-contact curves) as .glb.
    ExportDefault {
        /// Output .glb path.
        out: PathBuf,
    },
    /// Bake every clip of the first skinned mesh into an animation atlas for `ch15_crowd
    /// --anim-texture`.
    Bake(BakeArgs),
    /// Play an animation graph over a timeline of parameter changes and write a trace.
    Graph(demos::graph_tool::GraphArgs),
    /// Retarget clips of one humanoid onto another and write the target with them as .glb.
    Retarget(retarget::RetargetArgs),
    /// Compile every clip into a runtime clip and print its size and skinned error.
    Compress {
        /// A .gltf or .glb file.
        file: PathBuf,
        /// Tolerance at the skin, millimetres (glTF units are metres).
        #[arg(long, default_value_t = 1.0)]
        tolerance_mm: f32,
    },
}

#[derive(clap::Args)]
struct BakeArgs {
    /// A .gltf or .glb file (`default` for the built-in mannequin).
    file: PathBuf,
    /// Frames a second.
    #[arg(long, default_value_t = 30.0)]
    rate: f32,
    /// Texel layout: model-trs (the book's: model-space translation, rotation, scale), matrix
    /// (skinning matrices, 3 texels) or dq (skinning dual quaternions, 2 texels; rigid skins).
    #[arg(long, default_value = "model-trs")]
    layout: String,
    /// Texel precision: f32 or f16.
    #[arg(long, default_value = "f32")]
    format: String,
    /// Clips clamp at their ends instead of looping.
    #[arg(long)]
    clamp: bool,
    /// Output atlas path.
    #[arg(long)]
    out: PathBuf,
}

#[derive(clap::Args)]
struct SkinArgs {
    /// A .gltf or .glb file.
    file: PathBuf,
    /// Clip name or index (default: the first clip, or the rest pose when there is none).
    #[arg(long, conflicts_with = "rest")]
    clip: Option<String>,
    /// Use the nodes' authored TRS (no clip).
    #[arg(long)]
    rest: bool,
    /// Comma-separated raw times in seconds, `keys` (every key time of the clip) or `mid`
    /// (midpoints between consecutive key times). Default: 0.
    #[arg(long, allow_hyphen_values = true)]
    times: Option<String>,
    /// How times outside [0, duration] are handled.
    #[arg(long, value_enum, default_value_t = Policy::Clamp)]
    time_policy: Policy,
    /// Skinning method.
    #[arg(long, value_parser = demos::method_parser(), default_value = "lbs")]
    method: SkinMethod,
    /// Where skinning runs: `cpu`, or `compute` (also called `gpu`): the renderer's compute
    /// shaders, read back.
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    backend: Backend,
    /// Also write skinned normals.
    #[arg(long)]
    normals: bool,
    /// Output JSON path.
    #[arg(long)]
    out: PathBuf,
    /// Write positions and normals to this little-endian f32 file instead of inline.
    #[arg(long)]
    bin: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Policy {
    /// Clamp t to [0, duration]; channels hold their first/last values outside their keys.
    Clamp,
    /// t − duration·⌊t/duration⌋.
    Wrap,
}

impl From<Policy> for TimePolicy {
    fn from(p: Policy) -> Self {
        match p {
            Policy::Clamp => TimePolicy::Clamp,
            Policy::Wrap => TimePolicy::Wrap,
        }
    }
}

fn main() -> ExitCode {
    env_logger::init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect { file } => inspect(&file),
        Command::Sample { file, clip, time, time_policy } => sample(&file, &clip, time, time_policy.into()),
        Command::Skin(args) => skin(&args),
        Command::ExportDefault { out } => export_default(&out),
        Command::Bake(args) => bake(&args),
        Command::Compress { file, tolerance_mm } => compress(&file, tolerance_mm),
        Command::Graph(args) => demos::graph_tool::run(&args).map_err(|e| e.to_string()),
        Command::Retarget(args) => retarget::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("animtool: error: {e}");
            ExitCode::FAILURE
        }
    }
}

type Result<T> = std::result::Result<T, String>;

fn load(file: &Path) -> Result<Model> {
    anim_gltf::load(file).map_err(|e| format!("{}: {e}", file.display()))
}

fn find_clip(model: &Model, key: &str) -> Result<usize> {
    model.find_clip(key).ok_or_else(|| {
        let names: Vec<String> = model.clips.iter().enumerate().map(|(i, c)| format!("{i}: {:?}", c.name())).collect();
        format!("no clip {key:?} (clips: {})", if names.is_empty() { "none".into() } else { names.join(", ") })
    })
}

// ---------------------------------------------------------------------------------------------
// Streaming output.

/// Text output written as it is produced, through a [`BufWriter`]: the commands never hold
/// their whole output. Writes after the first I/O error are dropped and the error is
/// reported by [`Out::finish`] (check [`Out::failed`] to stop early).
struct Out {
    w: BufWriter<Box<dyn io::Write>>,
    err: Option<io::Error>,
    what: String,
}

impl Out {
    /// Output to standard output.
    fn stdout() -> Self {
        Self { w: BufWriter::new(Box::new(io::stdout().lock())), err: None, what: "stdout".into() }
    }

    /// Output to a new file at `path`.
    fn create(path: &Path) -> Result<Self> {
        let f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Self { w: BufWriter::with_capacity(1 << 16, Box::new(f)), err: None, what: path.display().to_string() })
    }

    fn push_str(&mut self, s: &str) {
        if self.err.is_none()
            && let Err(e) = self.w.write_all(s.as_bytes())
        {
            self.err = Some(e);
        }
    }

    fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    fn failed(&self) -> bool {
        self.err.is_some()
    }

    /// Flushes, and reports the first write error.
    fn finish(mut self) -> Result<()> {
        let r = match self.err.take() {
            Some(e) => Err(e),
            None => self.w.flush(),
        };
        r.map_err(|e| format!("{}: {e}", self.what))
    }
}

impl std::fmt::Write for Out {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// JSON helpers: f32 written with Rust's shortest round-trip formatting.

fn num(out: &mut Out, x: f32) {
    if x.is_finite() {
        let _ = write!(out, "{x}");
    } else {
        out.push_str("null");
    }
}

fn nums(out: &mut Out, xs: impl IntoIterator<Item = f32>) {
    out.push('[');
    for (i, x) in xs.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        num(out, x);
    }
    out.push(']');
}

fn string(out: &mut Out, s: &str) {
    out.push_str(&serde_json::Value::String(s.to_owned()).to_string());
}

fn clip_json(out: &mut Out, model: &Model, clip: Option<usize>) {
    match clip {
        None => out.push_str("null"),
        Some(i) => {
            let _ = write!(out, "{{\"index\":{i},\"name\":");
            match &model.clip_info[i].name {
                Some(n) => string(out, n),
                None => out.push_str("null"),
            }
            out.push_str(",\"duration\":");
            num(out, model.clips[i].duration());
            out.push('}');
        }
    }
}

// ---------------------------------------------------------------------------------------------
// inspect

/// Node-tree levels `inspect` shows by indentation; deeper nodes show their depth as a
/// number at this indentation, so output stays linear in the number of nodes.
const MAX_INDENT: usize = 32;

fn inspect(file: &Path) -> Result<()> {
    let m = load(file)?;
    let mut s = Out::stdout();
    let _ = writeln!(s, "{}", file.display());
    let _ = writeln!(
        s,
        "nodes: {}  skins: {}  mesh instances: {}  clips: {}  default scene: {}",
        m.nodes.len(),
        m.skins.len(),
        m.meshes.len(),
        m.clips.len(),
        m.scene.map_or("(none; scene 0 or all nodes)".to_owned(), |i| i.to_string())
    );
    let _ = writeln!(s, "\nnode tree (* = skin joint, [mesh m], [skin s]):");
    let roots: Vec<usize> = (0..m.nodes.len()).filter(|&i| m.nodes[i].parent.is_none()).collect();
    let mut children = vec![Vec::new(); m.nodes.len()];
    for (i, n) in m.nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            children[p].push(i);
        }
    }
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&r| (r, 0)).collect();
    while let Some((i, depth)) = stack.pop() {
        let n = &m.nodes[i];
        for _ in 0..=depth.min(MAX_INDENT) {
            s.push_str("  ");
        }
        if depth > MAX_INDENT {
            let _ = write!(s, "[depth {depth}] ");
        }
        let _ = write!(s, "{} {} {:?}", if n.is_skin_joint { "*" } else { "-" }, i, n.name);
        if let Some(mesh) = n.mesh {
            let _ = write!(s, " [mesh {mesh}]");
        }
        if let Some(sk) = n.skin {
            let _ = write!(s, " [skin {sk}]");
        }
        // `scene_nodes` is ascending: a binary search keeps the tree linear-logarithmic.
        if m.scene_nodes.binary_search(&i).is_err() {
            s.push_str(" (not in the default scene)");
        }
        s.push('\n');
        stack.extend(children[i].iter().rev().map(|&c| (c, depth + 1)));
    }
    let _ = writeln!(s, "\nskins:");
    let mut world = vec![Mat4::identity(); m.skeleton.len()];
    if !m.skins.is_empty() {
        m.world_matrices(m.skeleton.rest_pose(), &mut world).map_err(|e| e.to_string())?;
    }
    for (i, sk) in m.skins.iter().enumerate() {
        let _ = writeln!(s, "  {i} {:?}: {} joints, nodes {:?}", sk.name, sk.skin.len(), sk.nodes);
        // Is the authored rest pose the bind pose (world(joint) · IBM = I)?
        let dev = sk
            .skin
            .joints()
            .iter()
            .zip(sk.skin.inverse_bind())
            .map(|(&j, ibm)| (world[j] * ibm - Mat4::identity()).abs().max())
            .fold(0.0f32, f32::max);
        let _ = writeln!(
            s,
            "    rest pose {} the bind pose (max |world·IBM − I| = {dev:.3e})",
            if dev < 1e-4 { "is" } else { "is not" }
        );
    }
    let _ = writeln!(s, "\nprimitives:");
    for inst in &m.meshes {
        let _ = write!(
            s,
            "  node {} mesh {} primitive {}: {} vertices, {} triangles, normals: {}, ",
            inst.node,
            inst.mesh,
            inst.primitive,
            inst.data.vertex_count(),
            inst.data.indices.len() / 3,
            if inst.data.normals.is_empty() { "no" } else { "yes" }
        );
        match (&inst.data.influences, inst.skin) {
            (Some(inf), Some(sk)) => {
                let _ = writeln!(
                    s,
                    "skin {sk}, {} influence slots, vertices by non-zero weights {:?}",
                    inf.per_vertex(),
                    inf.histogram()
                );
            }
            _ => s.push_str("unskinned\n"),
        }
        if let Some(mt) = &inst.morph {
            let _ = writeln!(
                s,
                "    morph targets: {} {:?}, default weights {:?}",
                mt.target_count(),
                mt.names(),
                mt.default_weights()
            );
        }
    }
    let _ = writeln!(s, "\nclips:");
    for (i, (c, info)) in m.clips.iter().zip(&m.clip_info).enumerate() {
        let _ = writeln!(
            s,
            "  {i} {:?}: duration {} s (first key {} s), {} channels, {} curves",
            info.name.as_deref().unwrap_or("(unnamed)"),
            c.duration(),
            c.start_time(),
            info.channels.len(),
            c.curves().len()
        );
        for ch in &info.channels {
            let _ = writeln!(
                s,
                "      node {} {:<11} {:?}, {} keys, {}..{} s",
                ch.node, ch.property, ch.interpolation, ch.keys, ch.start, ch.end
            );
        }
        for cv in c.curves() {
            let _ = writeln!(s, "      curve {:?}: {} keys", cv.name, cv.track.times().len());
        }
    }
    let _ = writeln!(s, "\nwarnings: {}", m.warnings.len());
    for w in &m.warnings {
        let _ = writeln!(s, "  {w}");
    }
    s.finish()
}

// ---------------------------------------------------------------------------------------------
// sample

fn sample(file: &Path, clip: &str, time: f32, policy: TimePolicy) -> Result<()> {
    let m = load(file)?;
    let ci = find_clip(&m, clip)?;
    let mut pose = m.skeleton.rest_pose().clone();
    m.sample_pose(ci, time, policy, &mut pose).map_err(|e| e.to_string())?;
    let mut world = vec![Mat4::identity(); m.skeleton.len()];
    m.world_matrices(&pose, &mut world).map_err(|e| e.to_string())?;
    let mut s = Out::stdout();
    s.push_str("{\"model\":");
    string(&mut s, &file.display().to_string());
    s.push_str(",\"clip\":");
    clip_json(&mut s, &m, Some(ci));
    s.push_str(",\"time\":");
    num(&mut s, time);
    s.push_str(",\"nodes\":[");
    for (i, n) in m.nodes.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "\n{{\"node\":{i},\"name\":");
        string(&mut s, &n.name);
        let _ = write!(s, ",\"skinJoint\":{},\"world\":", n.is_skin_joint);
        nums(&mut s, world[n.joint].iter().copied());
        s.push('}');
    }
    s.push_str("\n]}\n");
    s.finish()
}

// ---------------------------------------------------------------------------------------------
// skin

/// The skinners behind `--backend`. The only place that decides where skinning runs.
enum Skinner {
    /// `anim_core`'s CPU loops through [`Model::skin_instance`].
    Cpu { scratch: SkinScratch },
    /// The renderer's compute shaders (lavapipe when there is no GPU), read back.
    Gpu(Box<demos::GpuInstanceSkinner>),
}

impl Skinner {
    fn new(backend: Backend) -> Result<Self> {
        match backend {
            Backend::Cpu => Ok(Skinner::Cpu { scratch: SkinScratch::new() }),
            Backend::Compute => demos::GpuInstanceSkinner::new()
                .map(|g| Skinner::Gpu(Box::new(g)))
                .map_err(|e| format!("GPU backend: {e}")),
            Backend::Vertex => Err("--backend vertex skins while drawing and cannot be read back; use \
                                    --backend compute (gpu) for GPU skinning"
                .into()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn skin(
        &mut self,
        model: &Model,
        instance: usize,
        world: &[Mat4],
        weights: Option<&[f32]>,
        method: SkinMethod,
        positions: &mut [Vec3],
        normals: Option<&mut [Vec3]>,
    ) -> Result<()> {
        // Morph targets first (`weights`, or the defaults), then skinning.
        match self {
            Skinner::Cpu { scratch } => model
                .skin_instance_weighted(instance, world, weights, method, scratch, positions, normals)
                .map_err(|e| e.to_string()),
            Skinner::Gpu(g) => g
                .skin_instance_weighted(model, instance, world, weights, method, positions, normals)
                .map_err(|e| e.to_string()),
        }
    }
}

fn parse_times(spec: Option<&str>, model: &Model, clip: Option<usize>) -> Result<Vec<f32>> {
    let spec = spec.unwrap_or("0");
    match spec.trim() {
        "keys" | "mid" => {
            let c = clip.ok_or_else(|| format!("--times {spec} needs a clip (not --rest)"))?;
            let keys = model.clips[c].key_times();
            if spec.trim() == "keys" { Ok(keys) } else { Ok(keys.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect()) }
        }
        list => list
            .split(',')
            .map(|t| {
                let v: f32 = t.trim().parse().map_err(|_| format!("--times: {t:?} is not a number"))?;
                if v.is_finite() { Ok(v) } else { Err(format!("--times: {t:?} is not finite")) }
            })
            .collect(),
    }
}

/// Where a float array goes: inline in the JSON, or appended to the binary file (streamed,
/// with the number of bytes written so far as the next offset).
struct Sink {
    bin: Option<(Out, usize)>,
}

impl Sink {
    fn floats(&mut self, out: &mut Out, v: &[Vec3]) {
        match &mut self.bin {
            None => nums(out, v.iter().flat_map(|p| [p.x, p.y, p.z])),
            Some((bin, offset)) => {
                let _ = write!(out, "{{\"binOffset\":{offset},\"length\":{}}}", v.len() * 3);
                for p in v {
                    let mut bytes = [0u8; 12];
                    for (k, x) in [p.x, p.y, p.z].into_iter().enumerate() {
                        bytes[4 * k..4 * k + 4].copy_from_slice(&x.to_le_bytes());
                    }
                    if bin.failed() {
                        break;
                    }
                    bin.w.write_all(&bytes).unwrap_or_else(|e| bin.err = Some(e));
                }
                *offset += v.len() * 12;
            }
        }
    }
}

/// Skins and writes as it goes: after an error, what was written before it stays (nothing
/// is deleted: `--out` may name a device or a pipe).
fn skin(a: &SkinArgs) -> Result<()> {
    let mut backend = Skinner::new(a.backend)?;
    let m = load(&a.file)?;
    let clip = match (&a.clip, a.rest) {
        (Some(c), _) => Some(find_clip(&m, c)?),
        (None, true) => None,
        (None, false) => (!m.clips.is_empty()).then_some(0),
    };
    let times = parse_times(a.times.as_deref(), &m, clip)?;
    let method = a.method;
    let policy: TimePolicy = a.time_policy.into();
    let mut sink = Sink { bin: a.bin.as_deref().map(Out::create).transpose()?.map(|o| (o, 0)) };
    let mut s = Out::create(&a.out)?;
    s.push_str("{\"model\":");
    string(&mut s, &a.file.display().to_string());
    s.push_str(",\"clip\":");
    clip_json(&mut s, &m, clip);
    let _ = write!(
        s,
        ",\"method\":\"{}\",\"backend\":\"{}\",\"samples\":[",
        a.method,
        match a.backend {
            Backend::Cpu => "cpu",
            Backend::Vertex | Backend::Compute => "gpu",
        }
    );
    let mut pose: Pose = m.skeleton.rest_pose().clone();
    let mut world = vec![Mat4::identity(); m.skeleton.len()];
    let mut positions: Vec<Vec3> = Vec::new();
    let mut normals: Vec<Vec3> = Vec::new();
    let mut morph_weights: Vec<f32> = Vec::new();
    for (ti, &t) in times.iter().enumerate() {
        match clip {
            Some(c) => m.sample_pose(c, t, policy, &mut pose).map_err(|e| e.to_string())?,
            None => pose.clone_from(m.skeleton.rest_pose()),
        }
        m.world_matrices(&pose, &mut world).map_err(|e| e.to_string())?;
        if ti > 0 {
            s.push(',');
        }
        s.push_str("\n{\"time\":");
        num(&mut s, t);
        s.push_str(",\"skins\":[");
        for (si, sk) in m.skins.iter().enumerate() {
            if si > 0 {
                s.push(',');
            }
            let _ = write!(s, "{{\"skin\":{si},\"jointWorld\":[");
            for (k, &j) in Skin::joints(&sk.skin).iter().enumerate() {
                if k > 0 {
                    s.push(',');
                }
                nums(&mut s, world[j].iter().copied());
            }
            s.push_str("]}");
        }
        s.push_str("],\"primitives\":[");
        for (ii, inst) in m.meshes.iter().enumerate() {
            let n = inst.data.vertex_count();
            positions.resize(n, Vec3::zeros());
            let want_normals = a.normals && !inst.data.normals.is_empty();
            normals.resize(if want_normals { n } else { 0 }, Vec3::zeros());
            // The clip's morph weights for this instance (its defaults without a clip).
            morph_weights.resize(inst.morph.as_ref().map_or(0, |t| t.target_count()), 0.0);
            if let Some(c) = clip {
                m.sample_weights(c, ii, t, policy, &mut morph_weights).map_err(|e| e.to_string())?;
            }
            backend.skin(
                &m,
                ii,
                &world,
                clip.map(|_| morph_weights.as_slice()),
                method,
                &mut positions,
                if want_normals { Some(&mut normals) } else { None },
            )?;
            if ii > 0 {
                s.push(',');
            }
            let _ = write!(
                s,
                "\n{{\"node\":{},\"mesh\":{},\"primitive\":{},\"skinned\":{},\"positions\":",
                inst.node,
                inst.mesh,
                inst.primitive,
                inst.skin.is_some()
            );
            sink.floats(&mut s, &positions);
            if a.normals {
                s.push_str(",\"normals\":");
                if want_normals {
                    sink.floats(&mut s, &normals);
                } else {
                    s.push_str("null");
                }
            }
            s.push('}');
            if s.failed() || sink.bin.as_ref().is_some_and(|(b, _)| b.failed()) {
                break;
            }
        }
        s.push_str("]}");
        if s.failed() {
            break;
        }
    }
    s.push_str("\n]}\n");
    s.finish()?;
    match sink.bin {
        Some((bin, _)) => bin.finish(),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// export-default

fn export_default(out: &Path) -> Result<()> {
    std::fs::write(out, anim_gltf::mannequin_glb()).map_err(|e| format!("{}: {e}", out.display()))
}

fn bake(a: &BakeArgs) -> Result<()> {
    let layout: TextureLayout = a.layout.parse().map_err(|e| format!("--layout: {e}"))?;
    let format: TexelFormat = a.format.parse().map_err(|e| format!("--format: {e}"))?;
    let character = if a.file.as_os_str() == "default" {
        demos::Character::mannequin()
    } else {
        demos::Character::from_gltf(&a.file).map_err(|e| format!("{}: {e}", a.file.display()))?
    };
    let (cc, skipped) = CrowdCharacter::new(character).map_err(|e| e.to_string())?;
    let ch = &cc.character;
    let settings = BakeSettings { rate: a.rate, layout, format };
    let clips: Vec<&anim_core::clip::Clip> = ch.clips.iter().map(|c| &**c).collect();
    // What `CrowdCharacter::bake_clips` bakes, one progress item a clip: sampling, then the
    // error measurement (the longer part: four skinned samples a frame).
    let sources: Vec<AtlasSource<'_>> = clips.iter().map(|&clip| AtlasSource { clip, looping: !a.clamp }).collect();
    let mut progress = Progress::new("bake", clips.len());
    let atlas = AnimAtlas::bake_with_progress(&ch.skeleton, cc.skin(), &[cc.mesh()], &sources, &settings, &mut |i| {
        next_clip(&mut progress, i, clips[i].name())
    })
    .map_err(|e| format!("{}: {e}", a.file.display()))?;
    progress.inc();
    progress.finish();
    let mut progress = Progress::new("bake error", clips.len());
    let error = anim_crowd::atlas::bake_error_with_progress(
        &atlas,
        &ch.skeleton,
        cc.skin(),
        &[cc.mesh()],
        &clips,
        4,
        &mut |i| next_clip(&mut progress, i, clips[i].name()),
    )
    .map_err(|e| e.to_string())?;
    progress.inc();
    progress.finish();
    atlas.save(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let bytes = std::fs::metadata(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?.len();
    println!(
        "{}: {} clip(s), {} skin joints, {layout} {format}, {} x {} texels, {bytes} bytes, rigid: {}",
        a.out.display(),
        atlas.clips().len(),
        atlas.joint_count(),
        atlas.width(),
        atlas.height(),
        atlas.is_rigid()
    );
    for (i, c) in atlas.clips().iter().enumerate() {
        println!(
            "  clip {i} {:?}: frames {}..{} ({} at {:.3} Hz), {:.4} s, {}",
            c.name,
            c.first_frame,
            c.first_frame + c.frame_count,
            c.frame_count,
            c.rate,
            c.duration,
            if c.looping { "looping" } else { "clamped" }
        );
    }
    println!(
        "  bake error (largest skinned-position deviation from exact sampling): {:.3e} of the {:.4} diagonal ({:.4} units)",
        error.max_fraction, error.diagonal, error.max_distance
    );
    for c in &error.clips {
        println!("    {:?}: {:.3e} at t = {:.4} s", c.name, c.max_fraction, c.at_time);
    }
    if skipped > 0 {
        println!("  note: only the first skinned mesh is baked; {skipped} other part(s) left out");
    }
    Ok(())
}

/// A progress hook's step: clip `i` starts, so clip `i - 1` is done.
fn next_clip(progress: &mut Progress, i: usize, name: &str) {
    if i > 0 {
        progress.inc();
    }
    progress.item(name);
}

// ---------------------------------------------------------------------------------------------
// compress

fn compress(file: &Path, tolerance_mm: f32) -> Result<()> {
    use anim_core::clip::runtime::RuntimeClip;
    use anim_core::offline::JointRadii;
    use anim_core::offline::compile::skin_deviation;
    let model = load(file)?;
    let tolerance = tolerance_mm * 0.001;
    let meshes: Vec<&anim_core::skin::Mesh> =
        model.meshes.iter().filter(|i| i.skin == Some(0)).map(|i| &i.data).collect();
    let (radii, skin) = match model.skins.first() {
        Some(s) if !meshes.is_empty() => {
            (JointRadii::from_skin(&model.skeleton, &s.skin, &meshes).map_err(|e| e.to_string())?, Some(&s.skin))
        }
        _ => (JointRadii::from_skeleton(&model.skeleton), None),
    };
    let diagonal = meshes
        .iter()
        .filter_map(|m| m.bounds())
        .reduce(|(a, b), (c, d)| (a.inf(&c), b.sup(&d)))
        .map_or(0.0, |(lo, hi)| (hi - lo).norm());
    println!(
        "{}: tolerance {tolerance_mm} mm at the skin, {} joints, {}",
        file.display(),
        model.skeleton.len(),
        if skin.is_some() {
            format!("skin 0 diagonal {diagonal:.4}")
        } else {
            "no skinned mesh (radii from the skeleton)".into()
        }
    );
    let mut progress = Progress::new("compress", model.clips.len());
    for (i, clip) in model.clips.iter().enumerate() {
        progress.item(clip.name());
        let rc = RuntimeClip::compile(clip, &model.skeleton, &radii, tolerance).map_err(|e| e.to_string())?;
        // Key data as floats: times plus values (three a key for cubic splines).
        let source: usize = model.clip_info.get(i).map_or(0, |info| {
            info.channels
                .iter()
                .map(|c| {
                    let comps = match c.property {
                        "rotation" => 4,
                        "weights" => 0,
                        _ => 3,
                    };
                    let per = if c.interpolation == anim_core::clip::Interpolation::CubicSpline { 3 } else { 1 };
                    c.keys * 4 * (1 + comps * per)
                })
                .sum()
        });
        let [t, r, s] = rc.key_counts();
        let mut line = format!(
            "  clip {i} {:?}: {:.4} s, glTF key data {source} bytes (f32), runtime {} bytes ({} keys: {t} T, {r} R, {s} S)",
            clip.name(),
            clip.duration(),
            rc.byte_size(),
            t + r + s
        );
        if let Some(skin) = skin {
            let mut times = clip.key_times();
            let steps = (clip.duration() * 120.0).ceil() as usize;
            times.extend((0..=steps).map(|k| (k as f32 / 120.0).min(clip.duration())));
            let err = skin_deviation(clip, &rc, &model.skeleton, skin, &meshes, &times).map_err(|e| e.to_string())?;
            let _ = write!(
                line,
                ", error {:.4} mm ({:.3e} of the diagonal)",
                err * 1000.0,
                if diagonal > 0.0 { err / diagonal } else { 0.0 }
            );
        }
        progress.suspend(|| println!("{line}"));
        progress.inc();
    }
    progress.finish();
    Ok(())
}
