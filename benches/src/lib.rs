//! Fixtures shared by the criterion benchmarks in `benches/benches/`: a generated skeleton,
//! a clip animating every channel of every joint, and a skinned grid mesh. Deterministic,
//! so runs compare.

#![warn(missing_docs)]

use anim_core::clip::{Clip, Interpolation, JointTracks, Track};

use anim_core::pose::{JointDesc, Skeleton};

use anim_core::skin::Influences;
use anim_math::{Quat, Transform, Vec3};

/// The path of a shared test model (`rel` under `shared/assets/`): the first ancestor of
/// the compiling crate's directory that holds `shared/assets/rel`. The benches run from the
/// workspace's `benches/` and from `ci/downstream-bench/`, two and three levels below the
/// repository, which sits beside `shared/`.
///
/// # Panics
/// When no ancestor holds the file.
pub fn shared_asset(rel: &str) -> String {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|dir| dir.join("shared/assets").join(rel))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no shared/assets/{rel} above {}", here.display()))
        .to_string_lossy()
        .into_owned()
}

/// Deterministic xorshift32 generator.
pub struct Rng(pub u32);

impl Rng {
    /// Uniform in `[0, 1)`.
    pub fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 >> 8) as f32 / (1u32 << 24) as f32
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }
}

/// A tree of `n` joints (each joint's parent is `(i − 1) / 3`), random rest transforms.
pub fn skeleton(n: usize) -> Skeleton {
    let mut rng = Rng(42);
    let joints = (0..n)
        .map(|i| {
            let rest = Transform::new(
                Vec3::new(rng.range(-0.2, 0.2), rng.range(0.1, 0.3), rng.range(-0.2, 0.2)),
                Quat::from_euler_angles(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.5, 0.5)),
                Vec3::new(1.0, 1.0, 1.0),
            );
            JointDesc::new(format!("joint{i}"), if i == 0 { None } else { Some((i - 1) / 3) }, rest)
        })
        .collect();
    Skeleton::new(joints).expect("generated parents precede their children")
}

/// A clip of `seconds` with `rate` linear keys a second on the translation, rotation and
/// scale of every joint (what a sampled-and-baked runtime clip looks like). Each channel
/// follows a smooth sinusoid with random amplitude, frequency and phase, so neighbouring
/// keys are close as in captured or authored motion.
pub fn clip(skeleton: &Skeleton, seconds: f32, rate: f32) -> Clip {
    let mut rng = Rng(7);
    let keys = (seconds * rate).ceil() as usize + 1;
    let times: Vec<f32> = (0..keys).map(|k| k as f32 / rate).collect();
    let wave = |rng: &mut Rng, amp: f32| {
        let (a, w, p) = (rng.range(0.2, 1.0) * amp, rng.range(1.0, 6.0), rng.range(0.0, std::f32::consts::TAU));
        move |t: f32| a * (w * t + p).sin()
    };
    let tracks = (0..skeleton.len())
        .map(|j| {
            let mut jt = JointTracks::new(j);
            let (tx, ty) = (wave(&mut rng, 0.1), wave(&mut rng, 0.1));
            let (rx, ry, rz) = (wave(&mut rng, 1.0), wave(&mut rng, 1.0), wave(&mut rng, 0.5));
            let sc = wave(&mut rng, 0.1);
            let tr = times.iter().map(|&t| Vec3::new(tx(t), 0.2 + ty(t), 0.0)).collect();
            let rot = times.iter().map(|&t| Quat::from_euler_angles(rx(t), ry(t), rz(t)).into_inner()).collect();
            let scale = times.iter().map(|&t| Vec3::new(1.0, 1.0, 1.0) * (1.0 + sc(t))).collect();
            jt.translation = Some(Track::new(Interpolation::Linear, times.clone(), tr).expect("valid keys"));
            jt.rotation = Some(Track::new(Interpolation::Linear, times.clone(), rot).expect("valid keys"));
            jt.scale = Some(Track::new(Interpolation::Linear, times.clone(), scale).expect("valid keys"));
            jt
        })
        .collect();
    Clip::new("bench", tracks, Vec::new()).expect("one track set a joint")
}

/// A skinned mesh of `vertices` vertices with `per` influences each over `joints` joints:
/// positions, unit normals and influences with neighbouring joints (so memory access is
/// mesh-like: nearby vertices use nearby palette entries).
pub fn mesh(vertices: usize, per: usize, joints: usize) -> (Vec<Vec3>, Vec<Vec3>, Influences) {
    let mut rng = Rng(1234);
    let mut positions = Vec::with_capacity(vertices);
    let mut normals = Vec::with_capacity(vertices);
    let mut j = Vec::with_capacity(vertices * per);
    let mut w = Vec::with_capacity(vertices * per);
    for v in 0..vertices {
        positions.push(Vec3::new(rng.range(-1.0, 1.0), rng.range(0.0, 2.0), rng.range(-1.0, 1.0)));
        normals.push(Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 1.0).normalize());
        let base = v * joints / vertices;
        for k in 0..per {
            j.push(((base + k) % joints) as u16);
            w.push(rng.range(0.1, 1.0));
        }
    }
    let influences = Influences::new(per, j, w, joints).expect("generated joints are in range");
    (positions, normals, influences)
}

/// The two-bone IK setup the `blend_ik` and `vs_ozz` benches share: a leg under a turned
/// parent reaching 64 targets around it, bending towards +z.
pub struct TwoBoneSetup {
    /// The parent joint's world transform.
    pub parent: Transform,
    /// The upper joint's local transform.
    pub upper: Transform,
    /// The middle joint's local transform.
    pub middle: Transform,
    /// The end effector in the middle joint's space.
    pub end: Vec3,
    /// Targets, visited in turn.
    pub targets: Vec<Vec3>,
    /// Pole vector.
    pub pole: Vec3,
}

impl TwoBoneSetup {
    /// The setup (deterministic).
    pub fn new() -> Self {
        let mut rng = Rng(5);
        let targets =
            (0..64).map(|_| Vec3::new(rng.range(-0.3, 0.5), rng.range(0.2, 0.7), rng.range(-0.3, 0.3))).collect();
        Self {
            parent: Transform::new(Vec3::new(0.1, 1.0, 0.0), Quat::from_euler_angles(0.1, 0.2, 0.0), Vec3::repeat(1.0)),
            upper: Transform::new(Vec3::new(0.1, 0.0, 0.0), Quat::from_euler_angles(0.2, 0.0, 0.1), Vec3::repeat(1.0)),
            middle: Transform::new(
                Vec3::new(0.0, -0.45, 0.0),
                Quat::from_euler_angles(-0.3, 0.0, 0.0),
                Vec3::repeat(1.0),
            ),
            end: Vec3::new(0.0, -0.45, 0.0),
            targets,
            pole: Vec3::z(),
        }
    }

    /// The three joints in model space, as `anim_ik::two_bone_corrections` takes them.
    pub fn joints(&self) -> anim_ik::TwoBoneJoints {
        let wa = self.parent.combine(&self.upper);
        let wb = wa.combine(&self.middle);
        anim_ik::TwoBoneJoints {
            upper: wa.translation,
            middle: wb.translation,
            end: wb.transform_point(&self.end),
            upper_rotation: wa.rotation,
            middle_rotation: wb.rotation,
        }
    }
}

impl Default for TwoBoneSetup {
    fn default() -> Self {
        Self::new()
    }
}

/// The aim IK setup the `blend_ik` and `vs_ozz` benches share: a head joint under a turned
/// neck looks at 64 targets around it, forward +z, up +y, world up +y.
pub struct AimSetup {
    /// The neck's world transform.
    pub neck: Transform,
    /// The head's local transform.
    pub head: Transform,
    /// Targets, visited in turn.
    pub looks: Vec<Vec3>,
    /// The head's forward axis.
    pub forward: Vec3,
    /// The head's up axis.
    pub up: Vec3,
    /// World up.
    pub world_up: Vec3,
}

impl AimSetup {
    /// The setup (deterministic).
    pub fn new() -> Self {
        let mut rng = Rng(11);
        let looks =
            (0..64).map(|_| Vec3::new(rng.range(-2.0, 2.0), rng.range(0.5, 2.5), rng.range(0.5, 3.0))).collect();
        Self {
            neck: Transform::new(
                Vec3::new(0.0, 1.6, 0.05),
                Quat::from_euler_angles(0.1, 0.3, -0.05),
                Vec3::repeat(1.0),
            ),
            head: Transform::new(
                Vec3::new(0.0, 0.12, 0.02),
                Quat::from_euler_angles(-0.2, 0.1, 0.0),
                Vec3::repeat(1.0),
            ),
            looks,
            forward: Vec3::z(),
            up: Vec3::y(),
            world_up: Vec3::y(),
        }
    }
}

impl Default for AimSetup {
    fn default() -> Self {
        Self::new()
    }
}
