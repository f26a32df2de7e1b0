//! CesiumMan and Fox drawn with their materials and textures: the colour histogram of the
//! textured render differs from the untextured one (the same pose in the body colour), and
//! the render matches a reference image stored in `tests/reference/` (rendered once and
//! checked by eye), within a tolerance, on every skinning backend (vertex shader, compute,
//! CPU). `ANIM_WRITE_REFERENCE=1` rewrites the references (and says so on stderr).

mod common;

use anim_core::skin::SkinMethod;
use anim_math::{Mat4, Vec3};
use anim_render_vk::{Camera, Coloring, Context, ContextDesc, FrameData, OFFSCREEN_FORMAT, Renderer, RgbaImage};
use demos::stage::BODY_COLOR;
use demos::{Backend, Character, Stage};
use std::path::{Path, PathBuf};

const SIZE: u32 = 256;

fn asset(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/assets").join(rel)
}

/// The character at time 0.5 s of its first clip, framed from the front-left.
fn render(ctx: &std::sync::Arc<Context>, character: Character, backend: Backend) -> RgbaImage {
    let mut renderer = Renderer::new(ctx, OFFSCREEN_FORMAT).unwrap();
    let mut stage = Stage::with_character(character).unwrap();
    stage.upload(&mut renderer, &Coloring::Uniform(BODY_COLOR)).unwrap();
    stage.sample(Some(0), 0.5).unwrap();
    stage.frame().unwrap();
    let (centre, radius) = stage.focus();
    let camera = Camera {
        eye: centre + Vec3::new(-0.9, 0.5, 2.2) * radius,
        target: centre,
        near: radius * 0.05,
        far: radius * 20.0,
        ..Camera::default()
    };
    let mut frame = FrameData { camera, ..FrameData::default() };
    stage.draw_with(&mut frame, &Mat4::identity(), SkinMethod::Lbs, backend).unwrap();
    common::render(ctx, &mut renderer, &frame, SIZE, SIZE)
}

/// Colour histogram (4 × 4 × 4 bins) of the pixels that are not the clear colour,
/// normalized to sum 1.
fn histogram(img: &RgbaImage) -> Vec<f32> {
    let clear = FrameData::default().clear_color.map(|c| (c * 255.0).round() as u8);
    let mut h = vec![0.0f32; 64];
    let mut n = 0.0;
    for p in img.pixels.chunks_exact(4) {
        if p[..3].iter().zip(&clear).all(|(a, b)| a.abs_diff(*b) <= 2) {
            continue;
        }
        h[usize::from(p[0] / 64) * 16 + usize::from(p[1] / 64) * 4 + usize::from(p[2] / 64)] += 1.0;
        n += 1.0;
    }
    assert!(n > 1000.0, "the character covers {n} pixels");
    h.iter().map(|x| x / n).collect()
}

fn l1(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum()
}

fn load_png(path: &Path) -> RgbaImage {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    RgbaImage { width: info.width, height: info.height, pixels: buf }
}

fn check(name: &str, rel: &str) {
    let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
    let character = Character::from_gltf(&asset(rel)).unwrap();
    let mut plain = character.clone();
    plain.looks = None;
    let textured = render(&ctx, character.clone(), Backend::Vertex);
    let untextured = render(&ctx, plain, Backend::Vertex);
    let (ht, hu) = (histogram(&textured), histogram(&untextured));
    assert!(l1(&ht, &hu) > 0.5, "{name}: textured and untextured histograms differ by only {}", l1(&ht, &hu));

    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference").join(format!("{name}.png"));
    if std::env::var_os("ANIM_WRITE_REFERENCE").is_some() {
        textured.save_png(&reference).unwrap();
        eprintln!("wrote {}: look at it before committing it", reference.display());
    }
    let want = load_png(&reference);
    assert_eq!((want.width, want.height), (SIZE, SIZE));
    let hr = histogram(&want);
    for backend in [Backend::Vertex, Backend::Compute, Backend::Cpu] {
        let img = if backend == Backend::Vertex { textured.clone() } else { render(&ctx, character.clone(), backend) };
        let d = l1(&histogram(&img), &hr);
        assert!(d < 0.05, "{name} {backend:?}: histogram {d} from the reference");
        let off = img
            .pixels
            .chunks_exact(4)
            .zip(want.pixels.chunks_exact(4))
            .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > 24));
        let fraction = off.count() as f32 / (SIZE * SIZE) as f32;
        assert!(fraction < 0.01, "{name} {backend:?}: {fraction} of the pixels differ from the reference");
    }
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}

#[test]
fn cesium_man_renders_with_its_texture() {
    check("CesiumMan", "CesiumMan/CesiumMan.glb");
}

#[test]
fn fox_renders_with_its_texture() {
    check("Fox", "Fox/Fox.glb");
}

/// A Fox crowd of nine drawn with its material on `path` (or in a flat colour when
/// `textured` is false), seen from above the field.
fn crowd_image(ctx: &std::sync::Arc<Context>, textured: bool, path: anim_render_vk::CrowdPath) -> RgbaImage {
    use anim_crowd::atlas::{BakeSettings, TexelFormat, TextureLayout};
    let mut character = Character::from_gltf(&asset("Fox/Fox.glb")).unwrap();
    if !textured {
        character.looks = None;
    }
    let (cc, _) = demos::crowd::CrowdCharacter::new(character).unwrap();
    let atlas =
        cc.bake(&BakeSettings { rate: 30.0, layout: TextureLayout::SkinMatrix, format: TexelFormat::F32 }).unwrap();
    let spacing = 150.0;
    let crowd = demos::crowd::populate(&atlas, 9, spacing, 7).unwrap();
    let mut renderer = Renderer::new(ctx, OFFSCREEN_FORMAT).unwrap();
    let mesh = cc.upload(&mut renderer, BODY_COLOR).unwrap();
    let id = renderer.add_crowd(mesh, &atlas, 9).unwrap();
    renderer.set_crowd_instances(id, crowd.instances()).unwrap();
    let camera = Camera {
        eye: Vec3::new(0.0, 350.0, 420.0),
        target: Vec3::new(0.0, 0.0, 0.0),
        near: 5.0,
        far: 3000.0,
        ..Camera::default()
    };
    let mut frame = FrameData { camera, ..FrameData::default() };
    frame.add_crowd(anim_render_vk::CrowdDraw { path, cull: true, ..anim_render_vk::CrowdDraw::new(id) });
    common::render(ctx, &mut renderer, &frame, SIZE, SIZE)
}

#[test]
fn a_fox_crowd_draws_its_texture_on_every_path() {
    use anim_render_vk::CrowdPath;
    let ctx = Context::new(&ContextDesc::headless(true)).unwrap();
    let flat = histogram(&crowd_image(&ctx, false, CrowdPath::Book));
    let book = crowd_image(&ctx, true, CrowdPath::Book);
    let h = histogram(&book);
    assert!(l1(&h, &flat) > 0.5, "textured and flat crowds differ by only {}", l1(&h, &flat));
    // The palette paths draw what the book path draws.
    for path in [CrowdPath::PaletteVertex, CrowdPath::PaletteCompute] {
        let img = crowd_image(&ctx, true, path);
        let off = img
            .pixels
            .chunks_exact(4)
            .zip(book.pixels.chunks_exact(4))
            .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > 24))
            .count();
        let fraction = off as f32 / (SIZE * SIZE) as f32;
        assert!(fraction < 0.01, "{path:?}: {fraction} of the pixels differ from the book path");
    }
    assert_eq!(ctx.validation_count(), 0, "{}", ctx.validation_messages().join("\n"));
}
