//! Materials on lavapipe with validation on, pixels checked against what the material says:
//! a textured quad against its texture, sampler and texture transform (sRGB decoded and
//! encoded), alpha mask and blend (blended surfaces after opaque ones), vertex colours, a
//! normal map lit from known directions against the GGX formula, back-face culling, and
//! the skinning paths (vertex shader, compute, CPU) drawing a material as a static mesh does.
//!
//! The quad faces the camera squarely, so texture coordinates are affine in screen space
//! and every pixel's (u, v) is known; with the light behind it only ambient and emission
//! remain, which the tests read exactly.

mod common;

use anim_core::skin::{Influences, Mesh, Palette, SkinMethod};
use anim_math::{Mat4, Vec3};
use anim_render_vk::material::{AMBIENT, LIGHT_RADIANCE};
use anim_render_vk::{
    AlphaMode, Camera, Coloring, Filter, FrameData, MaterialDesc, OFFSCREEN_FORMAT, Offscreen, Renderer, RgbaImage,
    SamplerDesc, SkinPath, Surface, TextureDesc, TextureSlot, Wrap,
};

const W: u32 = 128;
const H: u32 = 128;
const HALF: f32 = 1.0;

fn srgb_decode(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
}

fn srgb_encode(c: f32) -> u8 {
    let c = c.clamp(0.0, 1.0);
    let e = if c <= 0.0031308 { c * 12.92 } else { 1.055 * c.powf(1.0 / 2.4) - 0.055 };
    (e * 255.0).round() as u8
}

/// A quad of side 2 in the xy plane, facing +z, uv (0, 0) at its top-left corner (glTF's
/// v runs down the image), one joint weighted fully (for the skinning paths).
fn quad() -> Mesh {
    let h = HALF;
    Mesh {
        positions: vec![Vec3::new(-h, -h, 0.0), Vec3::new(h, -h, 0.0), Vec3::new(h, h, 0.0), Vec3::new(-h, h, 0.0)],
        normals: vec![Vec3::z(); 4],
        uvs: vec![[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
        influences: Some(Influences::new(1, vec![0; 4], vec![1.0; 4], 1).unwrap()),
        indices: vec![0, 1, 2, 0, 2, 3],
    }
}

/// Looking at the quad from +z; the light comes from `light` (towards it).
fn camera(light: Vec3) -> Camera {
    Camera { eye: Vec3::new(0.0, 0.0, 3.0), target: Vec3::zeros(), light_dir: light.normalize(), ..Camera::default() }
}

/// The light behind the quad: only ambient and emission reach the camera.
fn behind() -> Vec3 {
    Vec3::new(0.0, 0.0, -1.0)
}

/// The pixel showing the quad's point at texture coordinates (u, v).
fn pixel_at(cam: &Camera, u: f32, v: f32) -> (u32, u32) {
    let p = Vec3::new(-HALF + 2.0 * HALF * u, HALF - 2.0 * HALF * v, 0.0);
    let [x, y] = cam.project(&p, W, H).unwrap();
    (x as u32, y as u32)
}

fn render(r: &mut Renderer, frame: &FrameData) -> RgbaImage {
    let mut target = Offscreen::new(r.context(), W, H).unwrap();
    target.render(r, frame).unwrap();
    target.image().unwrap()
}

fn near(a: [u8; 4], b: [u8; 3], tol: u8) -> bool {
    a.iter().zip(&b).all(|(x, y)| x.abs_diff(*y) <= tol)
}

/// A 4 × 4 texture of distinct texels.
fn texels() -> Vec<u8> {
    (0..16u32).flat_map(|i| [(i * 16 + 8) as u8, (255 - i * 13) as u8, ((i * 37) % 256) as u8, 255]).collect()
}

fn texel(t: &[u8], x: u32, y: u32) -> [u8; 3] {
    let at = ((y * 4 + x) * 4) as usize;
    [t[at], t[at + 1], t[at + 2]]
}

#[test]
fn a_textured_quad_shows_its_texture_through_sampler_and_transform() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let pixels = texels();
    let nearest = |wrap| SamplerDesc {
        mag_filter: Filter::Nearest,
        min_filter: Filter::Nearest,
        mipmap: None,
        wrap_u: wrap,
        wrap_v: wrap,
    };
    let repeat = r
        .add_texture(&TextureDesc { width: 4, height: 4, pixels: &pixels, srgb: true, sampler: nearest(Wrap::Repeat) })
        .unwrap();
    let clamp = r
        .add_texture(&TextureDesc {
            width: 4,
            height: 4,
            pixels: &pixels,
            srgb: true,
            sampler: nearest(Wrap::ClampToEdge),
        })
        .unwrap();
    let cam = camera(behind());
    // (texture, transform, emissive factor, where texel (i, j) of the quad's 4 × 4 cells
    // samples from).
    type Lookup = fn(u32, u32) -> (u32, u32);
    let cases: [(_, [[f32; 3]; 2], f32, Lookup); 4] = [
        (repeat, TextureSlot::IDENTITY, 1.0, |i, j| (i, j)),
        // Offset by half the texture in u, repeating.
        (repeat, [[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]], 1.0, |i, j| ((i + 2) % 4, j)),
        // Scaled by 2 and clamped: the right and bottom halves show the edge texels.
        (clamp, [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]], 1.0, |i, j| ((2 * i + 1).min(3), (2 * j + 1).min(3))),
        // Half the emission: the texel is decoded from sRGB, halved, encoded again.
        (repeat, TextureSlot::IDENTITY, 0.5, |i, j| (i, j)),
    ];
    for (case, (texture, transform, k, lookup)) in cases.into_iter().enumerate() {
        let slot = TextureSlot { texture, tex_coord: 0, transform };
        let m = r
            .add_material(&MaterialDesc {
                base_color: [0.0, 0.0, 0.0, 1.0],
                emissive: [k; 3],
                emissive_texture: Some(slot),
                ..MaterialDesc::default()
            })
            .unwrap();
        let mesh = r.add_surface_mesh(&quad(), &Surface::of(m)).unwrap();
        let mut frame = FrameData { camera: cam, ..FrameData::default() };
        frame.add_static(mesh, Mat4::identity(), [1.0; 3]);
        let img = render(&mut r, &frame);
        for j in 0..4 {
            for i in 0..4 {
                // The centre of the cell (i, j), where nearest sampling picks one texel.
                let (u, v) = ((i as f32 + 0.5) / 4.0, (j as f32 + 0.5) / 4.0);
                let (x, y) = pixel_at(&cam, u, v);
                let (tx, ty) = lookup(i, j);
                let t = texel(&pixels, tx, ty);
                let want = if k == 1.0 { t } else { t.map(|c| srgb_encode(k * srgb_decode(c))) };
                let got = img.pixel(x, y);
                assert!(near(got, want, 1), "case {case}, cell ({i}, {j}) at ({x}, {y}): {got:?}, expected {want:?}");
            }
        }
        if case == 3 {
            // Without the sRGB decode the halved texel would read about 20 % brighter.
            let t = texel(&pixels, 3, 0)[0];
            let undecoded = (0.5 * f32::from(t) / 255.0).powf(1.0 / 2.2) * 255.0;
            let (x, y) = pixel_at(&cam, 0.875, 0.125);
            assert!(f32::from(img.pixel(x, y)[0]) < undecoded - 8.0);
        }
    }
    common::assert_clean(&ctx);
}

#[test]
fn alpha_mask_discards_and_blend_draws_after_opaque_surfaces() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    // Left texel opaque, right texel alpha 64.
    let pixels = [255, 255, 255, 255, 255, 255, 255, 64];
    let sampler = SamplerDesc {
        mag_filter: Filter::Nearest,
        min_filter: Filter::Nearest,
        mipmap: None,
        ..SamplerDesc::default()
    };
    let t = r.add_texture(&TextureDesc { width: 2, height: 1, pixels: &pixels, srgb: true, sampler }).unwrap();
    let emissive = [0.2, 0.4, 0.6];
    let glow = emissive.map(srgb_encode);
    let material = |r: &mut Renderer, alpha_mode| {
        let desc = MaterialDesc {
            base_color: [0.0, 0.0, 0.0, 1.0],
            base_color_texture: Some(TextureSlot::new(t)),
            emissive,
            alpha_mode,
            ..MaterialDesc::default()
        };
        let m = r.add_material(&desc).unwrap();
        r.add_surface_mesh(&quad(), &Surface::of(m)).unwrap()
    };
    let masked = material(&mut r, AlphaMode::Mask(0.5));
    let blended = material(&mut r, AlphaMode::Blend);
    let cam = camera(behind());
    let clear = FrameData::default().clear_color.map(|c| (c * 255.0).round() as u8);
    let (left, right) = (pixel_at(&cam, 0.25, 0.5), pixel_at(&cam, 0.75, 0.5));

    let mut frame = FrameData { camera: cam, ..FrameData::default() };
    frame.add_static(masked, Mat4::identity(), [1.0; 3]);
    let img = render(&mut r, &frame);
    assert!(near(img.pixel(left.0, left.1), glow, 1), "{:?}", img.pixel(left.0, left.1));
    assert!(near(img.pixel(right.0, right.1), [clear[0], clear[1], clear[2]], 1), "masked out");

    let a = 64.0 / 255.0;
    let over = |dst: [u8; 3]| -> [u8; 3] {
        std::array::from_fn(|k| (f32::from(glow[k]) * a + f32::from(dst[k]) * (1.0 - a)).round() as u8)
    };
    frame.clear();
    frame.add_static(blended, Mat4::identity(), [1.0; 3]);
    let img = render(&mut r, &frame);
    assert!(near(img.pixel(left.0, left.1), glow, 1));
    let want = over([clear[0], clear[1], clear[2]]);
    assert!(near(img.pixel(right.0, right.1), want, 2), "{:?} vs {want:?}", img.pixel(right.0, right.1));

    // An opaque red quad behind the blended one, listed after it: drawn first all the
    // same, so the blended half shows red through it.
    let red_m = r
        .add_material(&MaterialDesc {
            base_color: [0.0, 0.0, 0.0, 1.0],
            emissive: [1.0, 0.0, 0.0],
            ..MaterialDesc::default()
        })
        .unwrap();
    let red = r.add_surface_mesh(&quad(), &Surface::of(red_m)).unwrap();
    frame.clear();
    frame.add_static(blended, Mat4::identity(), [1.0; 3]);
    frame.add_static(red, Mat4::new_translation(&Vec3::new(0.0, 0.0, -0.5)) * Mat4::new_scaling(2.0), [1.0; 3]);
    let img = render(&mut r, &frame);
    let want = over([255, 0, 0]);
    assert!(near(img.pixel(right.0, right.1), want, 2), "{:?} vs {want:?}", img.pixel(right.0, right.1));
    common::assert_clean(&ctx);
}

#[test]
fn vertex_colours_multiply_the_base_colour() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let m = r
        .add_material(&MaterialDesc { base_color: [1.0, 0.5, 1.0, 1.0], metallic: 0.0, ..MaterialDesc::default() })
        .unwrap();
    let colors = [[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]];
    let mesh = r.add_surface_mesh(&quad(), &Surface { colors: &colors, ..Surface::of(m) }).unwrap();
    let cam = camera(behind());
    let mut frame = FrameData { camera: cam, ..FrameData::default() };
    frame.add_static(mesh, Mat4::identity(), [1.0; 3]);
    let img = render(&mut r, &frame);
    // Near each corner its colour × base × ambient (interpolation moves it a little: compared
    // in linear light, where a few per cent of a neighbour's colour stay small).
    for (k, (u, v)) in [(0.02, 0.98), (0.98, 0.98), (0.98, 0.02), (0.02, 0.02)].into_iter().enumerate() {
        let want: [f32; 3] = std::array::from_fn(|c| AMBIENT * colors[k][c] * [1.0, 0.5, 1.0][c]);
        let (x, y) = pixel_at(&cam, u, v);
        let got = img.pixel(x, y);
        assert!((0..3).all(|c| (srgb_decode(got[c]) - want[c]).abs() < 0.02), "corner {k}: {got:?} vs {want:?}");
    }
    // The centre: the average of the diagonal's two corners (red and blue here).
    let (x, y) = pixel_at(&cam, 0.5, 0.5);
    let linear: [f32; 3] = std::array::from_fn(|c| AMBIENT * 0.5 * (colors[0][c] + colors[2][c]) * [1.0, 0.5, 1.0][c]);
    let got = img.pixel(x, y);
    assert!((0..3).all(|c| (srgb_decode(got[c]) - linear[c]).abs() < 0.005), "{got:?} vs {linear:?}");
    // Back to a debug colouring and to the material again.
    r.recolor(mesh, &Coloring::Uniform([0.0, 1.0, 0.0])).unwrap();
    let mut unlit = frame.clone();
    unlit.style_last([1.0; 3], false);
    let img = render(&mut r, &unlit);
    assert_eq!(img.pixel(x, y), [0, 255, 0, 255], "debug colouring");
    r.recolor(mesh, &Coloring::Material).unwrap();
    let img = render(&mut r, &frame);
    assert!(near(img.pixel(x, y), [got[0], got[1], got[2]], 1), "{:?} vs {got:?}", img.pixel(x, y));
    common::assert_clean(&ctx);
}

/// The shader's GGX + Lambert radiance of a grey dielectric (metallic 0) of `roughness` and
/// base colour `base`, plus the ambient term.
fn ggx(n: Vec3, l: Vec3, v: Vec3, roughness: f32, base: f32) -> f32 {
    let h = (l + v).normalize();
    let (nl, nv, nh, vh) = (n.dot(&l).max(0.0), n.dot(&v).abs().max(1e-4), n.dot(&h).max(0.0), v.dot(&h).max(0.0));
    let a2 = (roughness * roughness).powi(2).max(1e-6);
    let dd = nh * nh * (a2 - 1.0) + 1.0;
    let d = a2 / (std::f32::consts::PI * dd * dd);
    let vis = 0.5 / (nl * (nv * nv * (1.0 - a2) + a2).sqrt() + nv * (nl * nl * (1.0 - a2) + a2).sqrt());
    let f = 0.04 + 0.96 * (1.0 - vh).powi(5);
    let diffuse = (1.0 - f) * base / std::f32::consts::PI;
    LIGHT_RADIANCE * nl * (diffuse + f * d * vis) + AMBIENT * base
}

#[test]
fn a_normal_map_is_lit_from_known_directions() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    // Every texel the tangent-space normal (sin 30°, 0, cos 30°): tilted towards +u = +x.
    let enc = |c: f32| ((c * 0.5 + 0.5) * 255.0).round() as u8;
    let (s, c) = (0.5f32, 0.75f32.sqrt());
    let pixels = [enc(s), enc(0.0), enc(c), 255];
    let t = r
        .add_texture(&TextureDesc {
            width: 1,
            height: 1,
            pixels: &pixels,
            srgb: false,
            sampler: SamplerDesc::default(),
        })
        .unwrap();
    // Grey, so that the lit side stays below white.
    let m = r
        .add_material(&MaterialDesc {
            base_color: [0.4, 0.4, 0.4, 1.0],
            metallic: 0.0,
            roughness: 0.7,
            normal_texture: Some(TextureSlot::new(t)),
            ..MaterialDesc::default()
        })
        .unwrap();
    let tangents = [[1.0, 0.0, 0.0, 1.0]; 4];
    let with_tangents = r.add_surface_mesh(&quad(), &Surface { tangents: &tangents, ..Surface::of(m) }).unwrap();
    let without = r.add_surface_mesh(&quad(), &Surface::of(m)).unwrap();
    // The mapped normal, decoded as the shader reads the 8-bit texel.
    let dec = |b: u8| f32::from(b) / 255.0 * 2.0 - 1.0;
    let mapped = Vec3::new(dec(pixels[0]), dec(pixels[1]), dec(pixels[2])).normalize();
    let (u, v) = (0.5, 0.5);
    for (name, mesh) in [("file tangents", with_tangents), ("derivative frame", without)] {
        // Along the mapped normal, and perpendicular to it (where a flat quad would still be
        // lit by half: dot(z, l) = 0.5).
        let perpendicular = Vec3::new(-c, 0.0, s);
        for (light, tol) in [(mapped, 3), (perpendicular, 1)] {
            let cam = camera(light);
            let mut frame = FrameData { camera: cam, ..FrameData::default() };
            frame.add_static(mesh, Mat4::identity(), [1.0; 3]);
            let img = render(&mut r, &frame);
            let (x, y) = pixel_at(&cam, u, v);
            let point = Vec3::new(0.0, 0.0, 0.0);
            let view = (cam.eye - point).normalize();
            let want = srgb_encode(ggx(mapped, light.normalize(), view, 0.7, 0.4));
            let got = img.pixel(x, y);
            assert!(
                got[0].abs_diff(want) <= tol && got[0] == got[1] && got[1] == got[2],
                "{name}, light {light:?}: {got:?}, expected {want}"
            );
        }
    }
    common::assert_clean(&ctx);
}

#[test]
fn single_sided_materials_cull_back_faces_and_double_sided_ones_do_not() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let cam = camera(behind());
    let (x, y) = pixel_at(&cam, 0.5, 0.5);
    for double_sided in [false, true] {
        let m = r
            .add_material(&MaterialDesc {
                base_color: [0.0, 0.0, 0.0, 1.0],
                emissive: [0.0, 1.0, 0.0],
                double_sided,
                ..MaterialDesc::default()
            })
            .unwrap();
        let mesh = r.add_surface_mesh(&quad(), &Surface::of(m)).unwrap();
        let mut facing = |model: Mat4| {
            let mut frame = FrameData { camera: cam, ..FrameData::default() };
            frame.add_static(mesh, model, [1.0; 3]);
            render(&mut r, &frame).pixel(x, y)[1] == 255
        };
        let turned = Mat4::from_euler_angles(0.0, std::f32::consts::PI, 0.0);
        // A mirroring model matrix flips the winding: the front face still faces the camera.
        let mirrored = Mat4::new_nonuniform_scaling(&Vec3::new(-1.0, 1.0, 1.0));
        assert!(facing(Mat4::identity()));
        assert!(facing(mirrored), "double-sided {double_sided}: mirrored");
        assert_eq!(facing(turned), double_sided, "double-sided {double_sided}: back face");
    }
    common::assert_clean(&ctx);
}

#[test]
fn every_skinning_path_draws_the_material_as_a_static_mesh_does() {
    let ctx = common::context();
    let mut r = Renderer::new(&ctx, OFFSCREEN_FORMAT).unwrap();
    let pixels = texels();
    let t = r
        .add_texture(&TextureDesc { width: 4, height: 4, pixels: &pixels, srgb: true, sampler: SamplerDesc::default() })
        .unwrap();
    let n = r
        .add_texture(&TextureDesc {
            width: 1,
            height: 1,
            pixels: &[160, 128, 230, 255],
            srgb: false,
            sampler: SamplerDesc::default(),
        })
        .unwrap();
    let m = r
        .add_material(&MaterialDesc {
            base_color_texture: Some(TextureSlot::new(t)),
            normal_texture: Some(TextureSlot::new(n)),
            metallic: 0.2,
            roughness: 0.5,
            ..MaterialDesc::default()
        })
        .unwrap();
    let tangents = [[1.0, 0.0, 0.0, 1.0]; 4];
    let mesh = r.add_surface_mesh(&quad(), &Surface { tangents: &tangents, ..Surface::of(m) }).unwrap();
    let cam = camera(Vec3::new(0.3, 0.5, 1.0));
    // The skinning palette turns the quad by 30° about y; the static draw turns it by the
    // same model matrix.
    let turn = Mat4::from_euler_angles(0.0, 0.5, 0.0);
    let mut frame = FrameData { camera: cam, ..FrameData::default() };
    frame.add_static(mesh, turn, [1.0; 3]);
    let reference = render(&mut r, &frame);
    let palette = Palette::Matrices(vec![turn]);
    for path in [SkinPath::VertexShader, SkinPath::Compute] {
        for method in [SkinMethod::Lbs, SkinMethod::Dq] {
            let palette = match method {
                SkinMethod::Lbs => palette.clone(),
                SkinMethod::Dq => {
                    let mut p = Palette::new(SkinMethod::Dq);
                    let skin = anim_core::skin::Skin::from_skeleton(
                        &anim_core::pose::Skeleton::new(vec![anim_core::pose::JointDesc::new(
                            "j",
                            None,
                            anim_math::Transform::IDENTITY,
                        )])
                        .unwrap(),
                    );
                    p.update(&[turn], &skin).unwrap();
                    p
                }
            };
            frame.clear();
            frame.add_skinned(mesh, Mat4::identity(), path, &palette).unwrap();
            let img = render(&mut r, &frame);
            let diff = differing(&img, &reference, 2);
            assert!(diff < 0.002, "{path:?} {method:?}: {diff} of the pixels differ");
        }
    }
    // CPU: skinned positions and normals with their tangents.
    let q = quad();
    let rot = turn.fixed_view::<3, 3>(0, 0).into_owned();
    let positions: Vec<Vec3> = q.positions.iter().map(|p| rot * p).collect();
    let normals: Vec<Vec3> = q.normals.iter().map(|p| rot * p).collect();
    let skinned_t: Vec<[f32; 4]> = tangents
        .iter()
        .map(|t| {
            let v = rot * Vec3::new(t[0], t[1], t[2]);
            [v.x, v.y, v.z, t[3]]
        })
        .collect();
    frame.clear();
    frame.add_cpu_with_tangents(mesh, Mat4::identity(), &positions, &normals, &skinned_t).unwrap();
    let img = render(&mut r, &frame);
    let diff = differing(&img, &reference, 2);
    assert!(diff < 0.002, "CPU: {diff} of the pixels differ");
    common::assert_clean(&ctx);
}

fn differing(a: &RgbaImage, b: &RgbaImage, tol: u8) -> f32 {
    let n = a
        .pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .filter(|(x, y)| x.iter().zip(y.iter()).any(|(p, q)| p.abs_diff(*q) > tol))
        .count();
    n as f32 / (a.width * a.height) as f32
}
