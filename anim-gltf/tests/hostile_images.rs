//! Hostile images inside otherwise valid glTF files: truncated, oversized, empty, foreign
//! and decompression-bomb images, images outside their buffer or the model's folder, and
//! every truncation and many byte flips of a real PNG and JPEG. Each is a typed error naming
//! `/images/0` (or loads), never a panic, and the bytes allocated while loading stay within
//! the memory budget (a counting allocator measures the peak, per thread).

mod common;

use anim_gltf::{GltfError, LoadOptions, Model};
use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static NOW: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counters are const-initialized thread
// locals (no allocation) read with `try_with` (no panic during thread teardown).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = NOW.try_with(|n| {
            n.set(n.get() + layout.size());
            let _ = PEAK.try_with(|p| p.set(p.get().max(n.get())));
        });
        // SAFETY: the caller's layout contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = NOW.try_with(|n| n.set(n.get().saturating_sub(layout.size())));
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Loads `v` with `budget`, returning the result and the peak bytes this thread held above
/// what it held before.
fn load_measured(v: &Value, budget: usize) -> (Result<Model, GltfError>, usize) {
    let bytes = serde_json::to_vec(v).unwrap();
    let base = NOW.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let options = LoadOptions { memory_budget: budget, ..LoadOptions::default() };
    let result = anim_gltf::load_from_bytes_with(&bytes, None, &options);
    (result, PEAK.with(Cell::get) - base)
}

/// The tiny triangle of `common` with a material whose base colour texture is `image`.
fn with_image(image: Value) -> Value {
    let mut v = common::doc(&common::Data::default());
    v["images"] = json!([image]);
    v["textures"] = json!([{"source": 0}]);
    v["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
    v["meshes"][0]["primitives"][0]["material"] = json!(0);
    v
}

fn data_uri(bytes: &[u8]) -> Value {
    json!({"uri": format!("data:image/png;base64,{}", common::base64(bytes))})
}

fn png(w: u32, h: u32, color: png::ColorType, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(color);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    let mut writer = enc.write_header().unwrap();
    writer.write_image_data(data).unwrap();
    drop(writer);
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

/// A PNG signature and an IHDR chunk declaring `w × h` RGBA8 (CRC correct), then an
/// IDAT of a few zero bytes and IEND: what a decompression bomb's header looks like.
fn png_header_only(w: u32, h: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8], data: &[u8]| {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    };
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    chunk(b"IHDR", &ihdr);
    chunk(b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);
    chunk(b"IEND", &[]);
    out
}

/// CesiumMan's JPEG texture, cut out of its GLB.
fn cesium_jpeg() -> Vec<u8> {
    let glb =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets/CesiumMan/CesiumMan.glb")).unwrap();
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let doc: Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    let view = &doc["bufferViews"][doc["images"][0]["bufferView"].as_u64().unwrap() as usize];
    let bin = 20 + json_len + 8;
    let (offset, len) =
        (view["byteOffset"].as_u64().unwrap_or(0) as usize, view["byteLength"].as_u64().unwrap() as usize);
    glb[bin + offset..bin + offset + len].to_vec()
}

/// Loads `v` with the default budget and expects an error naming `/images/0`.
#[track_caller]
fn expect_image_error(v: &Value) -> GltfError {
    let (result, _) = load_measured(v, anim_gltf::DEFAULT_MEMORY_BUDGET);
    let e = result.expect_err("a hostile image must not load");
    assert_eq!(e.path(), Some("/images/0"), "{e}");
    e
}

#[test]
fn truncated_zero_sized_and_foreign_images_are_typed_errors() {
    let good = png(2, 2, png::ColorType::Rgba, &[9; 16]);
    let e = expect_image_error(&with_image(data_uri(&good[..good.len() / 2])));
    assert!(matches!(e, GltfError::Image { .. }), "{e}");
    let e = expect_image_error(&with_image(data_uri(&png_header_only(0, 4))));
    assert!(matches!(e, GltfError::Image { .. }), "{e}");
    let e = expect_image_error(&with_image(data_uri(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")));
    assert!(e.to_string().contains("neither PNG nor JPEG"), "{e}");
    let e = expect_image_error(&with_image(data_uri(b"")));
    assert!(matches!(e, GltfError::Image { .. }), "{e}");
    let jpeg = cesium_jpeg();
    let e = expect_image_error(&with_image(data_uri(&jpeg[..jpeg.len() / 3])));
    assert!(matches!(e, GltfError::Image { .. }), "{e}");
}

#[test]
fn oversized_dimensions_are_refused_before_decoding() {
    let e = expect_image_error(&with_image(data_uri(&png_header_only(anim_gltf::MAX_IMAGE_DIMENSION + 1, 1))));
    assert!(matches!(e, GltfError::Unsupported { .. }), "{e}");
    // A JPEG whose frame header claims 60,000 × 60,000: refused by its size, not decoded.
    let mut jpeg = cesium_jpeg();
    // Walk the marker segments to the frame header (SOF0, SOF1 or SOF2).
    let mut sof = 2;
    while !matches!(jpeg[sof + 1], 0xC0..=0xC2) {
        sof += 2 + usize::from(u16::from_be_bytes([jpeg[sof + 2], jpeg[sof + 3]]));
    }
    jpeg[sof + 5..sof + 9].copy_from_slice(&[0xEA, 0x60, 0xEA, 0x60]);
    expect_image_error(&with_image(data_uri(&jpeg)));
}

#[test]
fn decompression_bombs_stay_within_the_budget() {
    // The header of a 16,384² RGBA image (1 GiB decoded) in 70 bytes: refused by the budget
    // before anything is allocated for it.
    let (result, peak) = load_measured(&with_image(data_uri(&png_header_only(16384, 16384))), 64 << 20);
    let e = result.unwrap_err();
    assert!(matches!(e, GltfError::Budget { .. }) && e.path() == Some("/images/0"), "{e}");
    assert!(peak < 64 << 20, "peak {peak} bytes");
    // A real bomb: 4,096² grey zeros compress to a few kilobytes and decode to 16 MiB (and
    // 64 MiB as RGBA). Under a 32 MiB budget: refused, and the peak stays below it.
    let bomb = png(4096, 4096, png::ColorType::Grayscale, &vec![0u8; 4096 * 4096]);
    assert!(bomb.len() < 200 << 10, "the bomb is small: {} bytes", bomb.len());
    let (result, peak) = load_measured(&with_image(data_uri(&bomb)), 32 << 20);
    let e = result.unwrap_err();
    assert!(matches!(e, GltfError::Budget { .. }) && e.path() == Some("/images/0"), "{e}");
    assert!(peak < 32 << 20, "peak {peak} bytes");
    // With room for it, the same image loads, and the load stays within its budget.
    let (result, peak) = load_measured(&with_image(data_uri(&bomb)), 128 << 20);
    let model = result.unwrap();
    assert_eq!((model.images[0].width, model.images[0].height), (4096, 4096));
    assert!(peak < 128 << 20, "peak {peak} bytes");
}

#[test]
fn images_without_exactly_one_source_or_a_mime_type_are_schema_errors() {
    // Found by the fuzz campaign: the `gltf` crate unwraps both when it reads the source.
    for (image, code) in [
        (json!({"bufferView": 0}), "UNSATISFIED_DEPENDENCY"),
        (json!({}), "ONE_OF_MISMATCH"),
        (json!({"bufferView": 0, "mimeType": "image/png", "uri": "a.png"}), "ONE_OF_MISMATCH"),
        (json!({"bufferView": 9, "mimeType": "image/png"}), "UNRESOLVED_REFERENCE"),
    ] {
        let (result, _) = load_measured(&with_image(image.clone()), anim_gltf::DEFAULT_MEMORY_BUDGET);
        let e = result.expect_err("an image without exactly one source must not load");
        assert!(e.path().is_some_and(|p| p.starts_with("/images/0")), "{image}: {e}");
        assert!(e.to_string().contains(code), "{image}: {e}");
    }
    // Not used by any texture: still refused (the whole document is checked first).
    let mut v = common::doc(&common::Data::default());
    v["images"] = json!([{"bufferView": 0}]);
    let (result, _) = load_measured(&v, anim_gltf::DEFAULT_MEMORY_BUDGET);
    assert_eq!(result.unwrap_err().path(), Some("/images/0"));
}

#[test]
fn images_outside_their_buffer_or_folder_are_refused() {
    let mut v = with_image(json!({"bufferView": 0, "mimeType": "image/png"}));
    v["bufferViews"][0]["byteLength"] = json!(1 << 20);
    let (result, _) = load_measured(&v, anim_gltf::DEFAULT_MEMORY_BUDGET);
    assert!(result.is_err());
    let dir = std::env::temp_dir().join(format!("anim-gltf-hostile-images-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("model")).unwrap();
    std::fs::write(dir.join("secret.png"), png(1, 1, png::ColorType::Rgba, &[1, 2, 3, 4])).unwrap();
    let v = with_image(json!({"uri": "../secret.png"}));
    let e = anim_gltf::load_from_bytes(&serde_json::to_vec(&v).unwrap(), Some(&dir.join("model"))).unwrap_err();
    assert!(matches!(e, GltfError::Image { .. }) && e.path() == Some("/images/0"), "{e}");
    assert!(e.to_string().contains("outside"), "{e}");
    // The same file inside the folder loads.
    std::fs::write(dir.join("model/ok.png"), png(1, 1, png::ColorType::Rgba, &[1, 2, 3, 4])).unwrap();
    let v = with_image(json!({"uri": "ok.png"}));
    let model = anim_gltf::load_from_bytes(&serde_json::to_vec(&v).unwrap(), Some(&dir.join("model"))).unwrap();
    assert_eq!(model.images[0].pixels, [1, 2, 3, 4]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_truncation_or_byte_flip_panics() {
    let png_bytes = png(5, 3, png::ColorType::Rgb, &(0..45).map(|i| (i * 37) as u8).collect::<Vec<u8>>());
    let jpeg = cesium_jpeg();
    let mut outcomes = [0usize; 2];
    let mut check = |bytes: &[u8]| match load_measured(&with_image(data_uri(bytes)), 64 << 20).0 {
        Ok(m) => {
            let i = &m.images[0];
            assert_eq!(i.pixels.len(), (i.width * i.height * 4) as usize);
            outcomes[0] += 1;
        }
        Err(e) => {
            assert_eq!(e.path(), Some("/images/0"), "{e}");
            outcomes[1] += 1;
        }
    };
    for len in 0..png_bytes.len() {
        check(&png_bytes[..len]);
    }
    for at in 0..png_bytes.len() {
        let mut b = png_bytes.clone();
        b[at] ^= 0x5A;
        check(&b);
    }
    // The JPEG: a hundred truncations and flips spread over it (it is ~100 KB).
    let step = jpeg.len() / 100;
    for k in 1..100 {
        check(&jpeg[..k * step]);
        let mut b = jpeg.clone();
        b[k * step] ^= 0xA5;
        check(&b);
    }
    assert!(outcomes[1] > 100, "most mutations are refused: {outcomes:?}");
}
