//! Property tests: interpolation stays within its keys, sampling at key times returns the
//! keys, cached sampling agrees with searching, and local-to-model agrees with a naive
//! recursive product of matrices on random skeletons.

use anim_core::clip::{Interpolation, Track};

use anim_core::pose::{JointDesc, Pose, Skeleton};
use anim_math::{Mat4, Quat, Transform, Vec3};
use nalgebra::{Quaternion, Unit};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 200, ..ProptestConfig::default() }
}

/// Strictly increasing key times: a start and positive gaps.
fn times(max_keys: usize) -> impl Strategy<Value = Vec<f32>> {
    (-5.0f32..5.0, prop::collection::vec(0.01f32..2.0, 1..max_keys)).prop_map(|(start, gaps)| {
        let mut t = vec![start];
        for g in gaps {
            t.push(t[t.len() - 1] + g);
        }
        t
    })
}

/// Key times, one value per key (three for cubic tracks) and a sample time that covers
/// the track and a little before and after it.
fn keys<T: std::fmt::Debug + Clone>(
    value: impl Strategy<Value = T> + Clone,
    per_key: usize,
) -> impl Strategy<Value = (Vec<f32>, Vec<T>, f32)> {
    times(8).prop_flat_map(move |t| {
        let n = t.len();
        let (lo, hi) = (t[0] - 1.0, t[n - 1] + 1.0);
        (Just(t), prop::collection::vec(value.clone(), n * per_key), lo..hi)
    })
}

fn vec3(range: f32) -> impl Strategy<Value = Vec3> + Clone {
    (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn quaternion() -> impl Strategy<Value = Quaternion<f32>> + Clone {
    (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
        .prop_filter("not near zero", |(w, x, y, z)| w * w + x * x + y * y + z * z > 1e-2)
        .prop_map(|(w, x, y, z)| Quaternion::new(w, x, y, z))
}

fn unit(q: &Quaternion<f32>) -> Quat {
    Unit::new_normalize(*q)
}

/// The rotation angle between two unit quaternions (q and −q are one rotation), from the
/// chord between them on the unit sphere: `4·asin(|a ∓ b| / 2)`, precise for small angles
/// where `2·acos(a·b)` in f32 reads a difference of 1e-7 as 1e-3 rad.
fn angle(a: &Quat, b: &Quat) -> f32 {
    let sign = if a.coords.dot(&b.coords) < 0.0 { -1.0 } else { 1.0 };
    4.0 * ((a.coords - b.coords * sign).norm() / 2.0).min(1.0).asin()
}

/// The keys bracketing `t`: (i, i + 1), or the same key twice outside the track.
fn bracket(times: &[f32], t: f32) -> (usize, usize) {
    let k = times.partition_point(|&x| x <= t);
    if k == 0 {
        (0, 0)
    } else if k == times.len() {
        (k - 1, k - 1)
    } else {
        (k - 1, k)
    }
}

fn within(v: f32, a: f32, b: f32) -> bool {
    let tol = 1e-5 * (1.0 + a.abs().max(b.abs()));
    v >= a.min(b) - tol && v <= a.max(b) + tol
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn linear_and_step_scalars_stay_between_their_keys((t, v, at) in keys(-100.0f32..100.0, 1)) {
        let (i, k) = bracket(&t, at);
        let linear = Track::new(Interpolation::Linear, t.clone(), v.clone()).unwrap();
        prop_assert!(within(linear.sample(at), v[i], v[k]), "{} not in [{}, {}]", linear.sample(at), v[i], v[k]);
        let step = Track::new(Interpolation::Step, t.clone(), v.clone()).unwrap();
        // Step holds the key at or before t (the first key before the track).
        prop_assert_eq!(step.sample(at), v[i]);
    }

    #[test]
    fn linear_and_step_vectors_stay_between_their_keys((t, v, at) in keys(vec3(100.0), 1)) {
        let (i, k) = bracket(&t, at);
        for mode in [Interpolation::Linear, Interpolation::Step] {
            let s = Track::new(mode, t.clone(), v.clone()).unwrap().sample(at);
            for c in 0..3 {
                prop_assert!(within(s[c], v[i][c], v[k][c]), "{mode:?} component {c}: {s:?} vs {:?}, {:?}", v[i], v[k]);
            }
        }
    }

    #[test]
    fn slerp_stays_unit_and_on_the_arc_between_its_keys((t, v, at) in keys(quaternion(), 1)) {
        let (i, k) = bracket(&t, at);
        let s = Track::new(Interpolation::Linear, t.clone(), v.clone()).unwrap().sample(at);
        prop_assert!((s.coords.norm() - 1.0).abs() < 1e-6);
        // On the shortest arc: the two parts add up to the whole, neither exceeds it.
        let (a, b) = (unit(&v[i]), unit(&v[k]));
        let (whole, left, right) = (angle(&a, &b), angle(&a, &s), angle(&s, &b));
        prop_assert!((left + right - whole).abs() < 2e-3, "{left} + {right} vs {whole}");
        prop_assert!(left <= whole + 1e-3 && right <= whole + 1e-3);
    }

    #[test]
    fn sampling_at_key_times_returns_the_keys(
        (t, v, _) in keys(-100.0f32..100.0, 3),
        (_, vv, _) in keys(vec3(100.0), 1),
        (_, q, _) in keys(quaternion(), 1),
    ) {
        let n = t.len();
        let cubic = Track::new(Interpolation::CubicSpline, t.clone(), v.clone()).unwrap();
        let linear = Track::new(Interpolation::Linear, t.clone(), (0..n).map(|j| v[3 * j + 1]).collect()).unwrap();
        let step = Track::new(Interpolation::Step, t.clone(), (0..n).map(|j| v[3 * j + 1]).collect()).unwrap();
        // Random vectors and rotations on the same times (as many as there are keys).
        let m = n.min(vv.len()).min(q.len());
        let vectors = Track::new(Interpolation::Linear, t[..m].to_vec(), vv[..m].to_vec()).unwrap();
        let rotations = Track::new(Interpolation::Linear, t[..m].to_vec(), q[..m].to_vec()).unwrap();
        for j in 0..n {
            // Hermite weights at a key are exactly (1, 0, 0, 0): the key itself, tangents
            // whatever they are.
            prop_assert_eq!(cubic.sample(t[j]), v[3 * j + 1]);
            prop_assert_eq!(linear.sample(t[j]), v[3 * j + 1]);
            prop_assert_eq!(step.sample(t[j]), v[3 * j + 1]);
        }
        for j in 0..m {
            prop_assert_eq!(vectors.sample(t[j]), vv[j]);
            prop_assert!(angle(&rotations.sample(t[j]), &unit(&q[j])) < 1e-3);
        }
    }

    #[test]
    fn cubic_splines_with_zero_tangents_stay_between_their_keys((t, v, at) in keys(-100.0f32..100.0, 3)) {
        // With flat tangents a Hermite segment is a smoothstep between its keys.
        let flat: Vec<f32> = v.iter().enumerate().map(|(j, x)| if j % 3 == 1 { *x } else { 0.0 }).collect();
        let (i, k) = bracket(&t, at);
        let s = Track::new(Interpolation::CubicSpline, t.clone(), flat.clone()).unwrap().sample(at);
        prop_assert!(within(s, flat[3 * i + 1], flat[3 * k + 1]));
    }

    #[test]
    fn cached_sampling_agrees_with_searching(
        (t, v, _) in keys(vec3(10.0), 1),
        steps in prop::collection::vec(-0.5f32..1.0, 1..40),
    ) {
        let track = Track::new(Interpolation::Linear, t.clone(), v).unwrap();
        let mut hint = 0;
        let mut now = t[0] - 0.5;
        for s in steps {
            now += s;
            prop_assert_eq!(track.sample_with_hint(&mut hint, now), track.sample(now));
        }
    }

    #[test]
    fn local_to_model_is_the_product_of_the_parent_chain(skeleton in skeleton_descs(), locals in any::<u64>()) {
        let descs = skeleton;
        let sk = Skeleton::new(descs.clone()).unwrap();
        // Rest pose: the descriptions' own transforms, whatever order the skeleton stores.
        let mut model = vec![Mat4::identity(); sk.len()];
        sk.rest_pose().local_to_model(&sk, &mut model).unwrap();
        for (j, d) in descs.iter().enumerate() {
            let at = sk.find(&d.name).unwrap();
            let naive = naive_model(&descs, j, &|i| descs[i].rest);
            prop_assert!(close(&model[at], &naive), "joint {j}: {:?} vs {naive:?}", model[at]);
        }
        // Another pose, non-uniform scales included: local_to_model is exact with them.
        let pose_locals: Vec<Transform> = (0..sk.len()).map(|i| pseudo_transform(locals, i)).collect();
        let pose = Pose::from_locals(pose_locals.clone());
        pose.local_to_model(&sk, &mut model).unwrap();
        for (j, d) in descs.iter().enumerate() {
            let at = sk.find(&d.name).unwrap();
            let naive = naive_model(&descs, j, &|i| pose_locals[sk.find(&descs[i].name).unwrap()]);
            prop_assert!(close(&model[at], &naive), "joint {j}: {:?} vs {naive:?}", model[at]);
        }
    }
}

/// Random joint descriptions in random order: each joint's parent is a joint made
/// before it in a hidden order, then the list is shuffled (Skeleton::new sorts it).
fn skeleton_descs() -> impl Strategy<Value = Vec<JointDesc>> {
    (1usize..24).prop_flat_map(|n| {
        (
            prop::collection::vec(any::<u32>(), n),
            prop::collection::vec((vec3(2.0), -3.0f32..3.0, -3.0f32..3.0, -3.0f32..3.0, 0.5f32..2.0), n),
            Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
        )
            .prop_map(move |(parents, rests, order)| {
                // Joint `order[i]` is the i-th made; its parent is one made earlier (or none).
                let mut descs: Vec<Option<JointDesc>> = (0..n).map(|_| None).collect();
                for i in 0..n {
                    let parent =
                        if i == 0 || parents[i] % 7 == 0 { None } else { Some(order[parents[i] as usize % i]) };
                    let (t, a, b, c, s) = rests[i];
                    let rest = Transform::new(t, Quat::from_euler_angles(a, b, c), Vec3::repeat(s));
                    descs[order[i]] = Some(JointDesc::new(format!("j{}", order[i]), parent, rest));
                }
                descs.into_iter().map(|d| d.expect("every joint is made once")).collect()
            })
    })
}

/// A transform with a non-uniform scale, from a seed and an index (deterministic).
fn pseudo_transform(seed: u64, i: usize) -> Transform {
    let mut x = seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 24) as f32
    };
    let t = Vec3::new(next() * 2.0 - 1.0, next() * 2.0 - 1.0, next() * 2.0 - 1.0);
    let r = Quat::from_euler_angles(next() * 6.0 - 3.0, next() * 6.0 - 3.0, next() * 6.0 - 3.0);
    let s = Vec3::new(0.5 + next() * 1.5, 0.5 + next() * 1.5, 0.5 + next() * 1.5);
    Transform::new(t, r, s)
}

/// Model matrix of joint `j` of the descriptions, by recursion up the parent links with
/// full 4×4 products.
fn naive_model(descs: &[JointDesc], j: usize, local: &dyn Fn(usize) -> Transform) -> Mat4 {
    let own = local(j).to_matrix();
    match descs[j].parent {
        Some(p) => naive_model(descs, p, local) * own,
        None => own,
    }
}

fn close(a: &Mat4, b: &Mat4) -> bool {
    (a - b).amax() <= 1e-4 * (1.0 + a.amax().max(b.amax()))
}
