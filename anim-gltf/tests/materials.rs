//! Materials, textures, samplers and images as imported: the shared models' known facts,
//! and documents built here whose every value is known (an embedded PNG read texel by
//! texel, sampler enums, texture transforms, emissive strength, the default material,
//! vertex colours, tangents read and generated).

mod common;

use anim_gltf::{AlphaMode, Filter, GltfError, Material, Model, Sampler, TextureTransform, Wrap};
use serde_json::{Value, json};

fn asset(rel: &str) -> Model {
    anim_gltf::load(format!("{}/../../shared/assets/{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// A `w × h` RGBA8 PNG whose texel (x, y) is `f(x, y)`.
pub fn png_rgba(w: u32, h: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().unwrap();
    let data: Vec<u8> = (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).flat_map(|(x, y)| f(x, y)).collect();
    writer.write_image_data(&data).unwrap();
    drop(writer);
    out
}

/// The tiny skinned triangle of `common` with TEXCOORD_0 and the given image as a data
/// URI, one texture and `material` on its primitive.
fn textured(material: Value, image: &[u8], extra_attributes: &[(&str, Value, Vec<u8>)]) -> Value {
    let mut v = common::doc(&common::Data::default());
    // Texture coordinates (and extra attributes) in a second buffer.
    let mut bin: Vec<u8> = [0.0f32, 0.0, 1.0, 0.0, 0.0, 1.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut views = vec![json!({"buffer": 1, "byteOffset": 0, "byteLength": 24})];
    let accessors = v["accessors"].as_array().unwrap().len();
    let uv_view = v["bufferViews"].as_array().unwrap().len();
    v["accessors"]
        .as_array_mut()
        .unwrap()
        .push(json!({"bufferView": uv_view, "componentType": 5126, "count": 3, "type": "VEC2"}));
    v["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_0"] = json!(accessors);
    for (k, (name, accessor, bytes)) in extra_attributes.iter().enumerate() {
        let view = v["bufferViews"].as_array().unwrap().len() + views.len();
        views.push(json!({"buffer": 1, "byteOffset": bin.len(), "byteLength": bytes.len()}));
        bin.extend_from_slice(bytes);
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let mut a = accessor.clone();
        a["bufferView"] = json!(view);
        v["accessors"].as_array_mut().unwrap().push(a);
        v["meshes"][0]["primitives"][0]["attributes"][*name] = json!(accessors + 1 + k);
    }
    v["bufferViews"].as_array_mut().unwrap().extend(views);
    v["buffers"].as_array_mut().unwrap().push(json!({
        "byteLength": bin.len(),
        "uri": format!("data:application/octet-stream;base64,{}", common::base64(&bin)),
    }));
    v["images"] = json!([{"uri": format!("data:image/png;base64,{}", common::base64(image))}]);
    v["samplers"] = json!([{"magFilter": 9728, "minFilter": 9985, "wrapS": 33071, "wrapT": 33648}]);
    v["textures"] = json!([{"source": 0, "sampler": 0}]);
    v["materials"] = json!([material]);
    v["meshes"][0]["primitives"][0]["material"] = json!(0);
    v
}

fn load(v: &Value) -> Result<Model, GltfError> {
    anim_gltf::load_from_bytes(&serde_json::to_vec(v).unwrap(), None)
}

#[test]
fn cesium_man_and_fox_carry_their_textures() {
    let man = asset("CesiumMan/CesiumMan.glb");
    assert_eq!(man.materials.len(), 1);
    let m = man.material_of(0).unwrap();
    assert_eq!(m.name, "Cesium_Man-effect");
    assert_eq!((m.metallic_factor, m.roughness_factor, m.alpha_mode), (0.0, 1.0, AlphaMode::Opaque));
    let t = m.base_color_texture.expect("a base colour texture");
    assert_eq!((t.texture, t.tex_coord, t.transform), (0, 0, TextureTransform::IDENTITY));
    let sampler = man.textures[0].sampler;
    // magFilter LINEAR, minFilter NEAREST_MIPMAP_LINEAR, REPEAT both ways.
    assert_eq!(
        sampler,
        Sampler {
            mag_filter: Filter::Linear,
            min_filter: Filter::Nearest,
            mipmap: Some(Filter::Linear),
            wrap_s: Wrap::Repeat,
            wrap_t: Wrap::Repeat
        }
    );
    let image = &man.images[man.textures[0].image];
    assert!(image.width > 0 && image.height > 0);
    assert_eq!(image.pixels.len(), (image.width * image.height * 4) as usize);
    assert!(image.pixels.chunks_exact(4).all(|p| p[3] == 255), "a JPEG is opaque");
    // Not one flat colour: the JPEG was decoded, not left at a default.
    let first = image.texel(0, 0).unwrap();
    assert!(image.pixels.chunks_exact(4).any(|p| p != first));
    assert!(man.meshes[0].tangents.is_empty(), "no normal texture, no tangents");

    let fox = asset("Fox/Fox.glb");
    let m = fox.material_of(0).unwrap();
    assert_eq!((m.name.as_str(), m.metallic_factor, m.roughness_factor), ("fox_material", 0.0, 0.58));
    // minFilter LINEAR_MIPMAP_LINEAR, no wraps: repeat.
    assert_eq!(fox.textures[0].sampler, Sampler::default());
    let image = &fox.images[0];
    assert!(image.width > 0 && image.pixels.len() == (image.width * image.height * 4) as usize);
}

#[test]
fn an_embedded_png_decodes_texel_for_texel() {
    let texel = |x: u32, y: u32| [(x * 60) as u8, (y * 80) as u8, 7, 200 + x as u8];
    let png = png_rgba(4, 3, texel);
    let m = json!({"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}});
    let model = load(&textured(m, &png, &[])).unwrap();
    let image = &model.images[0];
    assert_eq!((image.width, image.height), (4, 3));
    for y in 0..3 {
        for x in 0..4 {
            assert_eq!(image.texel(x, y), Some(texel(x, y)), "texel ({x}, {y})");
        }
    }
    // The sampler of the document: NEAREST / LINEAR_MIPMAP_NEAREST, CLAMP_TO_EDGE / MIRRORED_REPEAT.
    assert_eq!(
        model.textures[0].sampler,
        Sampler {
            mag_filter: Filter::Nearest,
            min_filter: Filter::Linear,
            mipmap: Some(Filter::Nearest),
            wrap_s: Wrap::ClampToEdge,
            wrap_t: Wrap::MirroredRepeat
        }
    );
}

#[test]
fn every_material_property_is_read() {
    let png = png_rgba(2, 2, |_, _| [255; 4]);
    let transform =
        json!({"KHR_texture_transform": {"offset": [0.25, 0.5], "rotation": 0.5, "scale": [2.0, 3.0], "texCoord": 1}});
    let m = json!({
        "name": "all",
        "pbrMetallicRoughness": {
            "baseColorFactor": [0.5, 0.25, 1.0, 0.75],
            "baseColorTexture": {"index": 0, "extensions": transform},
            "metallicFactor": 0.3, "roughnessFactor": 0.6,
            "metallicRoughnessTexture": {"index": 0, "texCoord": 1}
        },
        "normalTexture": {"index": 0, "scale": 0.8},
        "occlusionTexture": {"index": 0, "strength": 0.4},
        "emissiveTexture": {"index": 0},
        "emissiveFactor": [1.0, 0.5, 0.0],
        "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 5.0}},
        "alphaMode": "MASK", "alphaCutoff": 0.3, "doubleSided": true
    });
    let uv1: Vec<u8> = [0.0f32, 0.0, 1.0, 0.0, 0.0, 1.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    let colors: Vec<u8> = [255u8, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0].to_vec();
    let extra = [
        ("TEXCOORD_1", json!({"componentType": 5126, "count": 3, "type": "VEC2"}), uv1),
        ("COLOR_0", json!({"componentType": 5121, "normalized": true, "count": 3, "type": "VEC3"}), colors),
    ];
    let mut v = textured(m, &png, &extra);
    // COLOR_0 is VEC3 of bytes, padded to four bytes a vertex.
    let views = v["bufferViews"].as_array().unwrap().len();
    v["bufferViews"][views - 1]["byteStride"] = json!(4);
    v["extensionsUsed"] = json!(["KHR_texture_transform", "KHR_materials_emissive_strength"]);
    let model = load(&v).unwrap();
    let m = model.material_of(0).unwrap().into_owned();
    let base = m.base_color_texture.unwrap();
    assert_eq!(base.tex_coord, 1, "texCoord of the transform overrides the reference's");
    assert_eq!(base.transform, TextureTransform { offset: [0.25, 0.5], rotation: 0.5, scale: [2.0, 3.0] });
    assert_eq!(m.metallic_roughness_texture.unwrap().tex_coord, 1);
    let expected = Material {
        name: "all".into(),
        base_color_factor: [0.5, 0.25, 1.0, 0.75],
        base_color_texture: Some(base),
        metallic_factor: 0.3,
        roughness_factor: 0.6,
        metallic_roughness_texture: m.metallic_roughness_texture,
        normal_texture: m.normal_texture,
        normal_scale: 0.8,
        occlusion_texture: m.occlusion_texture,
        occlusion_strength: 0.4,
        emissive_factor: [1.0, 0.5, 0.0],
        emissive_texture: m.emissive_texture,
        emissive_strength: 5.0,
        alpha_mode: AlphaMode::Mask,
        alpha_cutoff: 0.3,
        double_sided: true,
    };
    assert_eq!(m, expected);
    let inst = &model.meshes[0];
    assert_eq!(inst.uvs1, [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]);
    assert_eq!(inst.colors, [[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]]);
    // A normal texture and no TANGENT: MikkTSpace tangents. The triangle lies in the xy
    // plane with u along +x and v along +y, so every tangent is +x; the smooth normal is
    // +z, and the bitangent cross(n, t) · w must point up the image, where v decreases:
    // −y, so w = −1.
    assert_eq!(inst.tangents.len(), 3);
    for t in &inst.tangents {
        assert!((t[0] - 1.0).abs() < 1e-5 && t[1].abs() < 1e-5 && t[2].abs() < 1e-5 && t[3] == -1.0, "{t:?}");
    }
}

#[test]
fn a_primitive_without_material_gets_the_default_one() {
    let model = load(&common::doc(&common::Data::default())).unwrap();
    assert_eq!(model.meshes[0].material, None);
    let m = model.material_of(0).unwrap();
    assert_eq!(*m, Material::default());
    assert_eq!((m.base_color_factor, m.metallic_factor, m.roughness_factor), ([1.0; 4], 1.0, 1.0));
    assert_eq!((m.alpha_mode, m.alpha_cutoff, m.double_sided), (AlphaMode::Opaque, 0.5, false));
}

#[test]
fn out_of_range_factors_are_named() {
    let png = png_rgba(1, 1, |_, _| [0; 4]);
    for (material, path) in [
        (json!({"pbrMetallicRoughness": {"metallicFactor": 1.5}}), "/materials/0/pbrMetallicRoughness/metallicFactor"),
        (json!({"emissiveFactor": [0.0, 2.0, 0.0]}), "/materials/0/emissiveFactor"),
        (
            json!({"extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": -1.0}}}),
            "/materials/0/extensions/KHR_materials_emissive_strength/emissiveStrength",
        ),
        (
            json!({"pbrMetallicRoughness": {"baseColorTexture": {"index": 0, "extensions": {"KHR_texture_transform": {"offset": [1.0]}}}}}),
            "/materials/0/pbrMetallicRoughness/baseColorTexture/extensions/KHR_texture_transform/offset",
        ),
    ] {
        let e = load(&textured(material, &png, &[])).unwrap_err();
        assert_eq!(e.path(), Some(path), "{e}");
    }
}

#[test]
fn tangents_from_the_file_are_read_and_unit() {
    let png = png_rgba(1, 1, |_, _| [128, 128, 255, 255]);
    let tangents: Vec<u8> = [0.0f32, 2.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let extra = [("TANGENT", json!({"componentType": 5126, "count": 3, "type": "VEC4"}), tangents)];
    let m = json!({"normalTexture": {"index": 0}});
    let model = load(&textured(m, &png, &extra)).unwrap();
    assert_eq!(model.meshes[0].tangents, [[0.0, 1.0, 0.0, -1.0]; 3]);
}
