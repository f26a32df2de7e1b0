//! Blend-space weights: they sum to one, are one-hot at every sample point, move no more
//! than a bound derived from the formula along random paths, and equal weights computed
//! independently, in `f64`, straight from Johansen's formula on random point sets. Then
//! the nodes: a blend space's pose is the weighted mean of its children, and children of
//! weight zero are not sampled.

mod common;

use anim_graph::blend_space::{GradientBands, weights_1d};
use anim_graph::builder::GraphBuilder;
use anim_graph::clips::ClipSet;
use anim_graph::desc::SpaceForm;
use common::{Run, chain, hold};
use std::f64::consts::PI;
use std::sync::Arc;

/// xorshift64*: a reproducible stream of numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
}

/// Johansen's influence of every point, in f64, from the formula as written (no
/// precomputation): Cartesian, or polar with (Δ|p| / mean |p|, 2·Δangle) and no angle for
/// pairs with a point at the origin.
fn influences(form: SpaceForm, pts: &[[f64; 2]], p: [f64; 2]) -> Vec<f64> {
    let mag = |q: [f64; 2]| q[0].hypot(q[1]);
    let ang = |a: [f64; 2], b: [f64; 2]| {
        // Signed angle from a to b in (−π, π].
        let d = b[1].atan2(b[0]) - a[1].atan2(a[0]);
        let d = d.rem_euclid(2.0 * PI);
        if d > PI { d - 2.0 * PI } else { d }
    };
    (0..pts.len())
        .map(|i| {
            let mut h = f64::INFINITY;
            for j in 0..pts.len() {
                if i == j {
                    continue;
                }
                let (pi, pj) = (pts[i], pts[j]);
                let (a, b) = match form {
                    SpaceForm::Cartesian => ([p[0] - pi[0], p[1] - pi[1]], [pj[0] - pi[0], pj[1] - pi[1]]),
                    SpaceForm::Polar => {
                        let mean = (mag(pi) + mag(pj)) / 2.0;
                        let origin_pair = mag(pi) == 0.0 || mag(pj) == 0.0;
                        let pa = if origin_pair || mag(p) == 0.0 { 0.0 } else { 2.0 * ang(pi, p) };
                        let pb = if origin_pair { 0.0 } else { 2.0 * ang(pi, pj) };
                        ([(mag(p) - mag(pi)) / mean, pa], [(mag(pj) - mag(pi)) / mean, pb])
                    }
                };
                h = h.min(1.0 - (a[0] * b[0] + a[1] * b[1]) / (b[0] * b[0] + b[1] * b[1]));
            }
            h.max(0.0)
        })
        .collect()
}

fn normalized(h: &[f64]) -> Vec<f64> {
    let s: f64 = h.iter().sum();
    h.iter().map(|x| x / s).collect()
}

/// `n` random points at least `gap` apart in `[-3, 3]²`.
fn cartesian_points(rng: &mut Rng, n: usize, gap: f64) -> Vec<[f64; 2]> {
    let mut pts: Vec<[f64; 2]> = Vec::new();
    while pts.len() < n {
        let p = [rng.range(-3.0, 3.0), rng.range(-3.0, 3.0)];
        if pts.iter().all(|q| (q[0] - p[0]).hypot(q[1] - p[1]) >= gap) {
            pts.push(p);
        }
    }
    pts
}

/// The origin and `n` points around it (at least one per quadrant, angles at least 0.2
/// rad apart), magnitudes 0.5 to 3: a velocity set as locomotion uses.
fn polar_points(rng: &mut Rng, n: usize) -> Vec<[f64; 2]> {
    let mut angles: Vec<f64> = (0..4).map(|q| (q as f64 + rng.range(0.1, 0.9)) * PI / 2.0).collect();
    while angles.len() < n {
        let a = rng.range(0.0, 2.0 * PI);
        if angles.iter().all(|b| ((a - b).rem_euclid(2.0 * PI)).min((b - a).rem_euclid(2.0 * PI)) > 0.2) {
            angles.push(a);
        }
    }
    let mut pts = vec![[0.0, 0.0]];
    pts.extend(angles.iter().map(|a| {
        let m = rng.range(0.5, 3.0);
        [m * a.cos(), m * a.sin()]
    }));
    pts
}

fn as_f32(pts: &[[f64; 2]]) -> Vec<[f32; 2]> {
    pts.iter().map(|p| [p[0] as f32, p[1] as f32]).collect()
}

/// Rounds the points to f32 and back, so the reference sees the points the bands see.
fn rounded(pts: &[[f64; 2]]) -> Vec<[f64; 2]> {
    as_f32(pts).iter().map(|p| [f64::from(p[0]), f64::from(p[1])]).collect()
}

#[test]
fn weights_sum_to_one_and_are_one_hot_at_the_points() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for trial in 0..200 {
        let form = if trial % 2 == 0 { SpaceForm::Cartesian } else { SpaceForm::Polar };
        let n = 2 + trial % 11;
        let pts =
            if form == SpaceForm::Cartesian { cartesian_points(&mut rng, n, 0.05) } else { polar_points(&mut rng, n) };
        let pts32 = as_f32(&pts);
        let g = GradientBands::new(form, &pts32).unwrap();
        let mut w = vec![0.0f32; pts.len()];
        for (k, p) in pts32.iter().enumerate() {
            g.weights(*p, &mut w);
            for (i, wi) in w.iter().enumerate() {
                assert_eq!(*wi, if i == k { 1.0 } else { 0.0 }, "{form:?} trial {trial}: point {k}");
            }
        }
        for _ in 0..50 {
            let p = [rng.range(-5.0, 5.0) as f32, rng.range(-5.0, 5.0) as f32];
            g.weights(p, &mut w);
            assert!(w.iter().all(|x| (0.0..=1.0).contains(x)), "{form:?} trial {trial}: {w:?}");
            assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{form:?} trial {trial}: {w:?}");
        }
    }
}

#[test]
fn weights_match_the_formula_computed_independently() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut worst = 0.0f64;
    for trial in 0..200 {
        let form = if trial % 2 == 0 { SpaceForm::Cartesian } else { SpaceForm::Polar };
        let n = 2 + trial % 11;
        let pts =
            if form == SpaceForm::Cartesian { cartesian_points(&mut rng, n, 0.3) } else { polar_points(&mut rng, n) };
        let g = GradientBands::new(form, &as_f32(&pts)).unwrap();
        let pts = rounded(&pts);
        let mut w = vec![0.0f32; pts.len()];
        for _ in 0..50 {
            let p = [rng.range(-4.0, 4.0), rng.range(-4.0, 4.0)];
            let p32 = [p[0] as f32, p[1] as f32];
            let p = [f64::from(p32[0]), f64::from(p32[1])];
            let h = influences(form, &pts, p);
            if h.iter().sum::<f64>() < 1e-3 {
                continue; // the polar fallback (nearest point) is tested elsewhere
            }
            let want = normalized(&h);
            g.weights(p32, &mut w);
            for (a, b) in w.iter().zip(&want) {
                worst = worst.max((f64::from(*a) - b).abs());
            }
        }
    }
    println!("largest difference from the f64 formula: {worst:.2e}");
    assert!(worst < 2e-5, "{worst}");
}

/// Along random paths of small steps, no weight moves more than the formula allows:
/// Cartesian, `|Δwᵢ| ≤ 2(n + 1)·|Δp| / dmin` (module docs of `blend_space`); polar, the
/// bound from the change of every band term at both ends of the step,
/// `|Δwᵢ| ≤ (|Δhᵢ| + wᵢ·Σₖ|Δhₖ|) / S'` with `|Δhₖ| ≤ maxⱼ (|Δu|·|dᵤ| + |Δv|·|dᵥ|) / |d|²`.
#[test]
fn weights_are_continuous_along_random_paths() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for trial in 0..40 {
        let form = if trial % 2 == 0 { SpaceForm::Cartesian } else { SpaceForm::Polar };
        let n = 3 + trial % 9;
        let pts =
            if form == SpaceForm::Cartesian { cartesian_points(&mut rng, n, 0.3) } else { polar_points(&mut rng, n) };
        let g = GradientBands::new(form, &as_f32(&pts)).unwrap();
        let pts = rounded(&pts);
        let n = pts.len();
        let dmin = (0..n)
            .flat_map(|i| (0..i).map(move |j| (i, j)))
            .map(|(i, j)| (pts[i][0] - pts[j][0]).hypot(pts[i][1] - pts[j][1]))
            .fold(f64::INFINITY, f64::min);
        let (mut w0, mut w1) = (vec![0.0f32; n], vec![0.0f32; n]);
        let mut p = [rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)];
        let step = 2e-3;
        let mut worst_ratio = 0.0f64;
        for _ in 0..2000 {
            let a = rng.range(0.0, 2.0 * PI);
            let mut q = [p[0] + step * a.cos(), p[1] + step * a.sin()];
            if form == SpaceForm::Polar && q[0].hypot(q[1]) < 0.2 {
                q = [p[0] - step * a.cos(), p[1] - step * a.sin()];
            }
            let (p32, q32) = ([p[0] as f32, p[1] as f32], [q[0] as f32, q[1] as f32]);
            g.weights(p32, &mut w0);
            g.weights(q32, &mut w1);
            let moved = (f64::from(q32[0]) - f64::from(p32[0])).hypot(f64::from(q32[1]) - f64::from(p32[1]));
            let bound = match form {
                SpaceForm::Cartesian => vec![2.0 * (n as f64 + 1.0) * moved / dmin; n],
                SpaceForm::Polar => polar_bound(&pts, p, q, &w0),
            };
            for i in 0..n {
                let d = f64::from((w1[i] - w0[i]).abs());
                assert!(d <= bound[i] + 2e-5, "{form:?} trial {trial}: weight {i} moved {d} > {}", bound[i]);
                if bound[i] > 1e-9 {
                    worst_ratio = worst_ratio.max(d / bound[i]);
                }
            }
            p = q;
            if p[0].abs() > 4.0 || p[1].abs() > 4.0 {
                p = [0.5, 0.5];
            }
        }
        assert!(worst_ratio <= 1.0 + 1e-3, "{worst_ratio}");
    }
}

/// The polar bound of one step `p → q` (see the test above), per weight.
fn polar_bound(pts: &[[f64; 2]], p: [f64; 2], q: [f64; 2], w0: &[f32]) -> Vec<f64> {
    let n = pts.len();
    let mag = |v: [f64; 2]| v[0].hypot(v[1]);
    let (mp, mq) = (mag(p), mag(q));
    let dtheta = {
        let d = (q[1].atan2(q[0]) - p[1].atan2(p[0])).rem_euclid(2.0 * PI);
        if d > PI { 2.0 * PI - d } else { d }
    };
    let dh: Vec<f64> = (0..n)
        .map(|k| {
            let mut m = 0.0f64;
            for j in 0..n {
                if j == k {
                    continue;
                }
                let (pk, pj) = (pts[k], pts[j]);
                let mean = (mag(pk) + mag(pj)) / 2.0;
                let origin_pair = mag(pk) == 0.0 || mag(pj) == 0.0;
                let du = (mq - mp).abs() / mean;
                let dv = if origin_pair { 0.0 } else { 2.0 * dtheta };
                let a = (mag(pj) - mag(pk)) / mean;
                let b = if origin_pair {
                    0.0
                } else {
                    let d = (pj[1].atan2(pj[0]) - pk[1].atan2(pk[0])).rem_euclid(2.0 * PI);
                    2.0 * if d > PI { d - 2.0 * PI } else { d }
                };
                m = m.max((du * a.abs() + dv * b.abs()) / (a * a + b * b));
            }
            m
        })
        .collect();
    let s1: f64 = influences(SpaceForm::Polar, pts, [f64::from(q[0] as f32), f64::from(q[1] as f32)]).iter().sum();
    let total: f64 = dh.iter().sum();
    (0..n).map(|i| (dh[i] + f64::from(w0[i]) * total) / s1).collect()
}

#[test]
fn one_axis_weights_are_the_neighbours_linear_shares() {
    let pos = [-1.0f32, 0.0, 0.5, 2.0];
    let mut w = [0.0f32; 4];
    for k in 0..=300 {
        let x = -1.5 + k as f32 * 0.0125;
        weights_1d(&pos, x, &mut w);
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        let i = pos.iter().rposition(|p| *p <= x).unwrap_or(0).min(2);
        let t = ((x - pos[i]) / (pos[i + 1] - pos[i])).clamp(0.0, 1.0);
        let want: Vec<f32> = (0..4)
            .map(|j| {
                if j == i {
                    1.0 - t
                } else if j == i + 1 {
                    t
                } else {
                    0.0
                }
            })
            .collect();
        for (a, b) in w.iter().zip(&want) {
            assert!((a - b).abs() < 1e-6, "x = {x}: {w:?} vs {want:?}");
        }
    }
}

/// A 2D blend space of clips holding joint 0 at distinct x: the pose is the weighted mean
/// of the children, and only children with weight are sampled.
#[test]
fn the_node_mixes_its_children_by_weight_and_samples_only_those_with_weight() {
    let xs = [0.0f32, 1.0, 2.0, 4.0, 8.0];
    let at = [[0.0f32, 0.0], [0.0, 1.0], [0.0, 3.0], [1.0, 0.0], [-1.0, 0.0]];
    let clips = ClipSet::from_clips((0..5).map(|i| hold(&format!("c{i}"), xs[i], 1.0, &[])));
    for form in [SpaceForm::Cartesian, SpaceForm::Polar] {
        let mut b = GraphBuilder::new();
        b.float("x", 0.0).float("y", 0.0);
        let names: Vec<String> = (0..5).map(|i| format!("c{i}")).collect();
        for n in &names {
            b.clip(n, n);
        }
        let points: Vec<(&str, [f32; 2])> = names.iter().map(String::as_str).zip(at).collect();
        b.blend_space_2d("space", "x", "y", form, &points);
        let g = Arc::new(b.build("space", &chain(1), &clips).unwrap());
        let bands = GradientBands::new(form, &at).unwrap();
        let (px, py) = (g.float_param("x").unwrap(), g.float_param("y").unwrap());
        let mut r = Run::new(&g);
        let mut rng = Rng(7);
        for _ in 0..100 {
            let p = [rng.range(-1.5, 1.5) as f32, rng.range(-1.0, 3.5) as f32];
            r.instance.set_float(px, p[0]).unwrap();
            r.instance.set_float(py, p[1]).unwrap();
            let before = r.instance.samples();
            r.step(1.0 / 60.0);
            let mut w = [0.0f32; 5];
            bands.weights(p, &mut w);
            assert_eq!(r.instance.blend_weights(g.node("space").unwrap()), &w[..]);
            let mean: f32 = w.iter().zip(xs).map(|(w, x)| w * x).sum();
            assert!((r.x() - mean).abs() < 1e-5, "{form:?} at {p:?}: {} vs {mean}", r.x());
            let active = w.iter().filter(|w| **w > 0.0).count() as u64;
            assert_eq!(r.instance.samples() - before, active, "{form:?} at {p:?}: {w:?}");
        }
    }
}
