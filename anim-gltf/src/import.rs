//! glTF → [`Model`].

use crate::{ClipInfo, GltfError, MeshInstance, Model, NodeInfo, SkinInfo};
use anim_core::{
    Clip, Influences, Interpolation, JointDesc, JointTracks, Mesh, Pose, ScalarCurve, Skeleton, SkeletonError, Skin,
    Track, TrackError,
};
use anim_math::{Mat4, Quat, Transform, Vec3};
use gltf::accessor::{DataType, Dimensions};
use gltf::animation::Property;
use gltf::mesh::{Mode, Semantic};
use nalgebra::Quaternion;
use std::path::Path;

/// Most `JOINTS_n`/`WEIGHTS_n` sets a primitive may have (64 influences a vertex).
pub const MAX_INFLUENCE_SETS: u32 = 16;

/// The most elements one accessor may have (2²⁶, about 67 million). Without a bufferView
/// nothing else bounds an accessor's count, and a tiny file could otherwise ask for tens
/// of gigabytes.
pub const MAX_ACCESSOR_COUNT: usize = 1 << 26;

pub(crate) fn load_bytes(bytes: &[u8], base_dir: Option<&Path>) -> Result<Model, GltfError> {
    let gltf = gltf::Gltf::from_slice_without_validation(bytes).map_err(convert_gltf_error)?;
    // Indices the `gltf` crate's own validation would index with (and panic on) or does not
    // check at all are checked first.
    precheck(gltf.document.as_json())?;
    let mut warnings = Vec::new();
    validate(gltf.document.as_json(), &mut warnings)?;
    let doc = gltf::Document::from_json_without_validation(gltf.document.into_json());
    let buffers = load_buffers(&doc, gltf.blob, base_dir)?;
    Importer { doc: &doc, buffers: &buffers, warnings }.run()
}

/// Extensions that compress geometry: a file that requires one of them cannot be read
/// without a decoder this importer does not have. (`KHR_mesh_quantization` is supported.)
const GEOMETRY_EXTENSIONS: [&str; 2] = ["KHR_draco_mesh_compression", "EXT_meshopt_compression"];

/// The `gltf` crate's schema validation, except that problems confined to parts this
/// runtime never reads (materials, textures, images, samplers, cameras) and required
/// extensions that do not touch geometry become warnings.
fn validate(root: &gltf::json::Root, warnings: &mut Vec<String>) -> Result<(), GltfError> {
    use gltf::json::validation::Validate;
    let mut errors = Vec::new();
    root.validate(root, gltf::json::Path::new, &mut |path, error| errors.push((path().to_string(), error)));
    for ext in &root.extensions_required {
        if GEOMETRY_EXTENSIONS.contains(&ext.as_str()) {
            return Err(GltfError::Unsupported {
                path: "extensionsRequired".into(),
                message: format!("the file requires {ext}, which this importer does not decode"),
            });
        }
    }
    let mut fatal = Vec::new();
    for (path, error) in errors {
        let ignorable = ["extensionsRequired", "materials", "textures", "images", "samplers", "cameras"]
            .iter()
            .any(|p| path.starts_with(p));
        let zero_accessor = path.starts_with("accessors[")
            && path.ends_with("].bufferView")
            && matches!(error, gltf::json::validation::Error::Missing);
        if zero_accessor {
            // Valid glTF: an accessor without a bufferView reads as zeros (plus any sparse
            // substitutions); `check_accessor` and the readers handle it.
        } else if ignorable && path.starts_with("extensionsRequired") && path.contains("KHR_mesh_quantization") {
            // Supported here (integer vertex attributes), though not by the `gltf` crate.
        } else if ignorable {
            warnings.push(format!("{path}: {error} (not needed for animation; ignored)"));
        } else {
            fatal.push((path, error));
        }
    }
    match fatal.first() {
        None => Ok(()),
        Some((path, error)) => {
            let more =
                if fatal.len() > 1 { format!(" (and {} more problems)", fatal.len() - 1) } else { String::new() };
            Err(GltfError::Schema { path: path.clone(), message: format!("{error}{more}") })
        }
    }
}

fn precheck(root: &gltf::json::Root) -> Result<(), GltfError> {
    let accessors = root.accessors.len();
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            for (semantic, index) in &prim.attributes {
                if index.value() >= accessors {
                    let name = match semantic {
                        gltf::json::validation::Checked::Valid(s) => s.to_string(),
                        gltf::json::validation::Checked::Invalid => "?".into(),
                    };
                    return Err(GltfError::Schema {
                        path: format!("meshes[{m}].primitives[{p}].attributes.{name}"),
                        message: format!("accessor {} does not exist ({accessors} accessors)", index.value()),
                    });
                }
            }
        }
    }
    let nodes = root.nodes.len();
    for (a, anim) in root.animations.iter().enumerate() {
        for (c, ch) in anim.channels.iter().enumerate() {
            if ch.target.node.value() >= nodes {
                return Err(GltfError::Schema {
                    path: format!("animations[{a}].channels[{c}].target.node"),
                    message: format!("node {} does not exist ({nodes} nodes)", ch.target.node.value()),
                });
            }
        }
    }
    Ok(())
}

fn convert_gltf_error(e: gltf::Error) -> GltfError {
    match e {
        gltf::Error::Validation(list) => {
            let (path, message) = list
                .first()
                .map(|(p, e)| (p.to_string(), e.to_string()))
                .unwrap_or_else(|| (String::from("document"), String::from("invalid")));
            let more = if list.len() > 1 { format!(" (and {} more problems)", list.len() - 1) } else { String::new() };
            GltfError::Schema { path, message: format!("{message}{more}") }
        }
        other => GltfError::Syntax(other.to_string()),
    }
}

// ---------------------------------------------------------------------------------------------
// Buffers

fn load_buffers(doc: &gltf::Document, blob: Option<Vec<u8>>, base: Option<&Path>) -> Result<Vec<Vec<u8>>, GltfError> {
    let mut blob = blob;
    let mut out = Vec::new();
    for buffer in doc.buffers() {
        let path = format!("buffers[{}]", buffer.index());
        let data = match buffer.source() {
            gltf::buffer::Source::Bin => blob.take().ok_or_else(|| GltfError::Buffer {
                path: path.clone(),
                message: "refers to the GLB binary chunk, which is missing".into(),
            })?,
            gltf::buffer::Source::Uri(uri) => read_uri(uri, base, &path)?,
        };
        if data.len() < buffer.length() {
            return Err(GltfError::Buffer {
                path,
                message: format!("byteLength is {} but only {} bytes are available", buffer.length(), data.len()),
            });
        }
        out.push(data);
    }
    Ok(out)
}

fn read_uri(uri: &str, base: Option<&Path>, path: &str) -> Result<Vec<u8>, GltfError> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let comma = rest
            .find(',')
            .ok_or_else(|| GltfError::Buffer { path: path.into(), message: "malformed data URI (no comma)".into() })?;
        let (meta, payload) = (&rest[..comma], &rest[comma + 1..]);
        if !meta.ends_with(";base64") {
            return Err(GltfError::Buffer {
                path: path.into(),
                message: "data URI is not base64-encoded (only base64 data URIs are supported)".into(),
            });
        }
        return decode_base64(payload)
            .map_err(|m| GltfError::Buffer { path: path.into(), message: format!("bad base64 in data URI: {m}") });
    }
    if uri.contains("://") {
        return Err(GltfError::Buffer { path: path.into(), message: format!("unsupported URI scheme in {uri:?}") });
    }
    let base = base.ok_or_else(|| GltfError::Buffer {
        path: path.into(),
        message: format!(
            "refers to external file {uri:?}, but the document was loaded from bytes without a base folder"
        ),
    })?;
    let file = base.join(percent_decode(uri));
    std::fs::read(&file)
        .map_err(|e| GltfError::Buffer { path: path.into(), message: format!("cannot read {}: {e}", file.display()) })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Standard base64 (RFC 4648) decoder; whitespace is skipped, padding is optional.
pub(crate) fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for (i, c) in s.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return Err(format!("invalid character {:?} at {i}", c as char)),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Accessors

fn dims_name(d: Dimensions) -> &'static str {
    match d {
        Dimensions::Scalar => "SCALAR",
        Dimensions::Vec2 => "VEC2",
        Dimensions::Vec3 => "VEC3",
        Dimensions::Vec4 => "VEC4",
        Dimensions::Mat2 => "MAT2",
        Dimensions::Mat3 => "MAT3",
        Dimensions::Mat4 => "MAT4",
    }
}

fn type_name(t: DataType) -> &'static str {
    match t {
        DataType::I8 => "BYTE",
        DataType::U8 => "UNSIGNED_BYTE",
        DataType::I16 => "SHORT",
        DataType::U16 => "UNSIGNED_SHORT",
        DataType::U32 => "UNSIGNED_INT",
        DataType::F32 => "FLOAT",
    }
}

/// What an accessor must look like for one use.
struct Want {
    dims: &'static [Dimensions],
    /// Allowed (component type, must be normalized) pairs.
    types: &'static [(DataType, bool)],
    what: &'static str,
}

const F32: (DataType, bool) = (DataType::F32, false);

/// Checks type, count ≥ 1 and that every byte the accessor (and its sparse part) reads
/// lies in its buffer view and the view in its buffer, so the `gltf` readers cannot fail.
fn check_accessor(acc: &gltf::Accessor, buffers: &[Vec<u8>], want: &Want, user: &str) -> Result<(), GltfError> {
    let path = format!("accessors[{}]", acc.index());
    let dims = acc.dimensions();
    let dt = acc.data_type();
    let type_ok = want.types.iter().any(|&(t, norm)| t == dt && (!norm || acc.normalized()));
    if !want.dims.contains(&dims) || !type_ok {
        let allowed: Vec<String> = want
            .types
            .iter()
            .map(|&(t, n)| format!("{}{}", if n { "normalized " } else { "" }, type_name(t)))
            .collect();
        return Err(GltfError::accessor(
            path,
            format!(
                "used as {user} ({}) it must be {} of {}, but it is {} of {}{}",
                want.what,
                want.dims.iter().map(|d| dims_name(*d)).collect::<Vec<_>>().join("/"),
                allowed.join("/"),
                dims_name(dims),
                if acc.normalized() { "normalized " } else { "" },
                type_name(dt)
            ),
        ));
    }
    let count = acc.count();
    if count == 0 {
        return Err(GltfError::accessor(path, format!("used as {user}: count is 0")));
    }
    if count > MAX_ACCESSOR_COUNT {
        // Without a bufferView nothing bounds `count` by the file's size.
        return Err(GltfError::Unsupported {
            path,
            message: format!("used as {user}: count {count} is more than the supported {MAX_ACCESSOR_COUNT}"),
        });
    }
    let elem = acc.size();
    if let Some(view) = acc.view() {
        check_view_range(&view, buffers, acc.offset(), count, elem, true, &path)?;
    }
    // Without a bufferView the accessor is all zeros (glTF 2.0, 3.6.2.1), then sparse.
    if let Some(sparse) = acc.sparse() {
        let n = sparse.count();
        let spath = format!("{path}.sparse");
        if n == 0 || n > count {
            return Err(GltfError::accessor(spath, format!("sparse count {n} is not in 1..={count}")));
        }
        let idx = sparse.indices();
        let isize = idx.index_type().size();
        check_view_range(&idx.view(), buffers, idx.offset(), n, isize, false, &format!("{spath}.indices"))?;
        let vals = sparse.values();
        check_view_range(&vals.view(), buffers, vals.offset(), n, elem, false, &format!("{spath}.values"))?;
        // Indices must be in range (the validator also wants them increasing).
        let view = idx.view();
        let start = view.offset() + idx.offset();
        let data = &buffers[view.buffer().index()][start..start + n * isize];
        let mut prev: Option<usize> = None;
        for k in 0..n {
            let i = match isize {
                1 => usize::from(data[k]),
                2 => usize::from(u16::from_le_bytes([data[2 * k], data[2 * k + 1]])),
                _ => u32::from_le_bytes([data[4 * k], data[4 * k + 1], data[4 * k + 2], data[4 * k + 3]]) as usize,
            };
            if i >= count || prev.is_some_and(|p| i <= p) {
                return Err(GltfError::accessor(
                    format!("{spath}.indices"),
                    format!("index {k} is {i}: sparse indices must increase and be below the count {count}"),
                ));
            }
            prev = Some(i);
        }
    }
    Ok(())
}

fn check_view_range(
    view: &gltf::buffer::View,
    buffers: &[Vec<u8>],
    offset: usize,
    count: usize,
    elem: usize,
    strided: bool,
    path: &str,
) -> Result<(), GltfError> {
    let vpath = format!("bufferViews[{}]", view.index());
    let buf = view.buffer().index();
    let buf_len = buffers.get(buf).map_or(0, Vec::len);
    let view_end = view.offset().saturating_add(view.length());
    if view_end > buf_len {
        return Err(GltfError::Buffer {
            path: vpath,
            message: format!(
                "bytes {}..{} lie outside buffers[{buf}], which has {buf_len} bytes",
                view.offset(),
                view_end
            ),
        });
    }
    let stride = if strided { view.stride().unwrap_or(elem) } else { elem };
    if stride < elem {
        return Err(GltfError::accessor(
            path,
            format!("{vpath} has byteStride {stride}, smaller than the element size {elem}"),
        ));
    }
    let need = stride
        .checked_mul(count - 1)
        .and_then(|v| v.checked_add(elem))
        .and_then(|v| v.checked_add(offset))
        .unwrap_or(usize::MAX);
    if need > view.length() {
        return Err(GltfError::accessor(
            path,
            format!(
                "reads {need} bytes (offset {offset}, {count} elements of {elem} bytes, stride {stride}) but {vpath} has {}",
                view.length()
            ),
        ));
    }
    Ok(())
}

fn check_finite<const N: usize>(items: &[[f32; N]], path: &str, what: &str) -> Result<(), GltfError> {
    if let Some(i) = items.iter().position(|v| v.iter().any(|x| !x.is_finite())) {
        return Err(GltfError::NonFinite { path: path.into(), what: format!("{what} {i}") });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The importer

struct Importer<'a> {
    doc: &'a gltf::Document,
    buffers: &'a [Vec<u8>],
    warnings: Vec<String>,
}

const VEC3_F32: Want = Want { dims: &[Dimensions::Vec3], types: &[F32], what: "VEC3 FLOAT" };
/// Vertex attribute types, including those `KHR_mesh_quantization` allows.
const POSITIONS: Want = Want {
    dims: &[Dimensions::Vec3],
    types: &[F32, (DataType::I8, false), (DataType::U8, false), (DataType::I16, false), (DataType::U16, false)],
    what: "VEC3 FLOAT (or integers with KHR_mesh_quantization)",
};
const NORMALS: Want = Want {
    dims: &[Dimensions::Vec3],
    types: &[F32, (DataType::I8, true), (DataType::I16, true)],
    what: "VEC3 FLOAT (or normalized BYTE/SHORT with KHR_mesh_quantization)",
};
const TEXCOORDS: Want = Want {
    dims: &[Dimensions::Vec2],
    types: &[F32, (DataType::I8, false), (DataType::U8, false), (DataType::I16, false), (DataType::U16, false)],
    what: "VEC2 FLOAT or (normalized) integers",
};

/// Reads an accessor of any component type as floats, applying glTF's normalization for
/// `normalized` integers (`c / 255`, `max(c / 127, -1)`, …) and sparse substitution. Used
/// for the integer attribute types of `KHR_mesh_quantization` (and texture coordinates),
/// which the `gltf` crate's typed readers do not cover. The accessor must have passed
/// [`check_accessor`].
fn quantized<const N: usize>(acc: &gltf::Accessor, buffers: &[Vec<u8>]) -> Vec<[f32; N]> {
    let dt = acc.data_type();
    let csize = dt.size();
    let elem = csize * N;
    let norm = acc.normalized();
    let decode = |b: &[u8]| -> [f32; N] {
        let mut out = [0.0f32; N];
        for (c, o) in out.iter_mut().enumerate() {
            let x = &b[c * csize..(c + 1) * csize];
            *o = match dt {
                DataType::F32 => f32::from_le_bytes([x[0], x[1], x[2], x[3]]),
                DataType::I8 => {
                    let v = f32::from(x[0] as i8);
                    if norm { (v / 127.0).max(-1.0) } else { v }
                }
                DataType::U8 => {
                    let v = f32::from(x[0]);
                    if norm { v / 255.0 } else { v }
                }
                DataType::I16 => {
                    let v = f32::from(i16::from_le_bytes([x[0], x[1]]));
                    if norm { (v / 32767.0).max(-1.0) } else { v }
                }
                DataType::U16 => {
                    let v = f32::from(u16::from_le_bytes([x[0], x[1]]));
                    if norm { v / 65535.0 } else { v }
                }
                DataType::U32 => u32::from_le_bytes([x[0], x[1], x[2], x[3]]) as f32,
            };
        }
        out
    };
    let mut out = vec![[0.0f32; N]; acc.count()];
    if let Some(view) = acc.view() {
        let data = &buffers[view.buffer().index()];
        let stride = view.stride().unwrap_or(elem);
        let start = view.offset() + acc.offset();
        for (i, o) in out.iter_mut().enumerate() {
            *o = decode(&data[start + i * stride..start + i * stride + elem]);
        }
    }
    if let Some(sparse) = acc.sparse() {
        let (idx, vals) = (sparse.indices(), sparse.values());
        let iv = idx.view();
        let idata = &buffers[iv.buffer().index()][iv.offset() + idx.offset()..];
        let vv = vals.view();
        let vdata = &buffers[vv.buffer().index()][vv.offset() + vals.offset()..];
        let isize = idx.index_type().size();
        for k in 0..sparse.count() {
            let b = &idata[k * isize..];
            let i = match isize {
                1 => usize::from(b[0]),
                2 => usize::from(u16::from_le_bytes([b[0], b[1]])),
                _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
            };
            out[i] = decode(&vdata[k * elem..(k + 1) * elem]);
        }
    }
    out
}

impl<'a> Importer<'a> {
    fn data(&self) -> impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'a [u8]> + use<'a> {
        let buffers = self.buffers;
        move |b: gltf::Buffer<'a>| buffers.get(b.index()).map(Vec::as_slice)
    }

    fn run(mut self) -> Result<Model, GltfError> {
        let (skeleton, nodes) = self.skeleton()?;
        let scene_nodes = self.scene_nodes(&skeleton);
        let skins = self.skins(&skeleton)?;
        let meshes = self.meshes(&skeleton, &skins, &scene_nodes)?;
        let (clips, clip_info) = self.clips(&skeleton)?;
        // The skeleton's own bind pose: the first skin's, the rest pose elsewhere.
        let skeleton = match skins.first() {
            Some(s) => skeleton.with_bind_pose(s.bind_pose.clone()).map_err(|e| GltfError::Argument(e.to_string()))?,
            None => skeleton,
        };
        Ok(Model {
            skeleton,
            nodes,
            scene: self.doc.default_scene().map(|s| s.index()),
            scene_nodes,
            skins,
            meshes,
            clips,
            clip_info,
            warnings: self.warnings,
        })
    }

    /// Every node becomes a joint (source index = node index), so anything a skin or a
    /// channel refers to has a world transform.
    fn skeleton(&mut self) -> Result<(Skeleton, Vec<NodeInfo>), GltfError> {
        let n = self.doc.nodes().len();
        if n > Skeleton::MAX_JOINTS {
            return Err(GltfError::Unsupported {
                path: "nodes".into(),
                message: format!("{n} nodes, at most {} are supported", Skeleton::MAX_JOINTS),
            });
        }
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for node in self.doc.nodes() {
            for child in node.children() {
                let c = child.index();
                if c == node.index() {
                    return Err(GltfError::Hierarchy {
                        path: format!("nodes[{}].children", node.index()),
                        message: "a node is its own child".into(),
                    });
                }
                if let Some(p) = parent[c] {
                    return Err(GltfError::Hierarchy {
                        path: format!("nodes[{}].children", node.index()),
                        message: format!("node {c} is already a child of node {p}; the node graph must be a forest"),
                    });
                }
                parent[c] = Some(node.index());
            }
        }
        let mut joints = Vec::with_capacity(n);
        let mut infos = Vec::with_capacity(n);
        for node in self.doc.nodes() {
            let i = node.index();
            let path = format!("nodes[{i}]");
            let rest = match node.transform() {
                gltf::scene::Transform::Matrix { matrix } => {
                    check_finite(&matrix, &path, "matrix column")?;
                    let m = Mat4::from_column_slice(matrix.as_flattened());
                    Transform::from_matrix(&m)
                }
                gltf::scene::Transform::Decomposed { translation, rotation, scale } => {
                    check_finite(&[translation], &path, "translation")?;
                    check_finite(&[rotation], &path, "rotation")?;
                    check_finite(&[scale], &path, "scale")?;
                    let q = Quaternion::new(rotation[3], rotation[0], rotation[1], rotation[2]);
                    if q.norm() < 1e-12 {
                        return Err(GltfError::NonFinite { path, what: "rotation (zero quaternion)".into() });
                    }
                    Transform::new(Vec3::from(translation), Quat::from_quaternion(q), Vec3::from(scale))
                }
            };
            let name = node.name().unwrap_or("").to_owned();
            infos.push(NodeInfo {
                name: name.clone(),
                parent: parent[i],
                mesh: node.mesh().map(|m| m.index()),
                skin: node.skin().map(|s| s.index()),
                joint: 0,
                is_skin_joint: false,
            });
            joints.push(JointDesc::new(name, parent[i], rest));
        }
        let skeleton = Skeleton::new(joints).map_err(|e| match e {
            SkeletonError::Cycle { joint, .. } => GltfError::Hierarchy {
                path: format!("nodes[{joint}]"),
                message: "is part of a cycle in the node hierarchy".into(),
            },
            other => GltfError::Hierarchy { path: "nodes".into(), message: other.to_string() },
        })?;
        for (i, info) in infos.iter_mut().enumerate() {
            info.joint = skeleton.from_source_index(i).expect("every node is a joint of the skeleton");
        }
        for skin in self.doc.skins() {
            for j in skin.joints() {
                infos[j.index()].is_skin_joint = true;
            }
        }
        Ok((skeleton, infos))
    }

    /// Nodes of the default scene (scene 0 when `scene` is absent; every node when there
    /// are no scenes), in node-index order.
    fn scene_nodes(&mut self, skeleton: &Skeleton) -> Vec<usize> {
        let scene = self.doc.default_scene().or_else(|| self.doc.scenes().next());
        let mut in_scene = vec![scene.is_none(); self.doc.nodes().len()];
        if let Some(scene) = scene {
            for root in scene.nodes() {
                let j = skeleton.from_source_index(root.index()).expect("node is a joint");
                for k in skeleton.subtree(j) {
                    in_scene[skeleton.source_index(k).expect("joint has a source")] = true;
                }
            }
        }
        (0..in_scene.len()).filter(|&i| in_scene[i]).collect()
    }

    fn skins(&mut self, skeleton: &Skeleton) -> Result<Vec<SkinInfo>, GltfError> {
        let mut out = Vec::new();
        let mut rest_world = vec![Mat4::identity(); skeleton.len()];
        skeleton
            .rest_pose()
            .local_to_model(skeleton, &mut rest_world)
            .expect("rest pose and buffer have the skeleton's length");
        for skin in self.doc.skins() {
            let spath = format!("skins[{}]", skin.index());
            let joints: Vec<usize> =
                skin.joints().map(|n| skeleton.from_source_index(n.index()).expect("node is a joint")).collect();
            if joints.is_empty() {
                return Err(GltfError::Schema { path: format!("{spath}.joints"), message: "empty joint list".into() });
            }
            let mut first_use: Vec<Option<usize>> = vec![None; skeleton.len()];
            for (k, &j) in joints.iter().enumerate() {
                if let Some(prev) = first_use[j].replace(k) {
                    return Err(GltfError::JointOutOfRange {
                        path: format!("{spath}.joints[{k}]"),
                        message: format!("node is listed twice (also at index {prev})"),
                    });
                }
            }
            let ibms: Vec<Mat4> = match skin.inverse_bind_matrices() {
                None => vec![Mat4::identity(); joints.len()],
                Some(acc) => {
                    let apath = format!("{spath}.inverseBindMatrices");
                    check_accessor(
                        &acc,
                        self.buffers,
                        &Want { dims: &[Dimensions::Mat4], types: &[F32], what: "MAT4 FLOAT" },
                        &apath,
                    )?;
                    if acc.count() < joints.len() {
                        return Err(GltfError::accessor(
                            apath,
                            format!(
                                "accessors[{}] has only {} matrices for {} joints",
                                acc.index(),
                                acc.count(),
                                joints.len()
                            ),
                        ));
                    }
                    let m: Vec<[[f32; 4]; 4]> = skin
                        .reader(self.data())
                        .read_inverse_bind_matrices()
                        .ok_or_else(|| GltfError::accessor(apath.clone(), "cannot be read"))?
                        // The spec allows more matrices than joints; the extra ones are unused.
                        .take(joints.len())
                        .collect();
                    let flat: Vec<[f32; 16]> = m
                        .iter()
                        .map(|c| {
                            let mut a = [0.0; 16];
                            a.copy_from_slice(c.as_flattened());
                            a
                        })
                        .collect();
                    check_finite(&flat, &apath, "inverse bind matrix")?;
                    flat.iter().map(|a| Mat4::from_column_slice(a)).collect()
                }
            };
            let core = Skin::new(joints.clone(), ibms.clone(), skeleton)
                .map_err(|e| GltfError::JointOutOfRange { path: format!("{spath}.joints"), message: e.to_string() })?;
            // Bind pose (chapter 10): rest world transforms, skin joints replaced by
            // inverse(IBM), converted back to parent-local.
            let mut world = rest_world.clone();
            for (k, (&j, ibm)) in joints.iter().zip(&ibms).enumerate() {
                match ibm.try_inverse() {
                    Some(inv) => world[j] = inv,
                    None => self.warnings.push(format!(
                        "{spath}.inverseBindMatrices[{k}] is singular; the bind pose keeps the rest transform there"
                    )),
                }
            }
            let mut locals = Vec::with_capacity(skeleton.len());
            for (i, w) in world.iter().enumerate() {
                let local = match skeleton.parent(i) {
                    Some(p) => world[p].try_inverse().map_or(*w, |inv| inv * w),
                    None => *w,
                };
                locals.push(Transform::from_matrix(&local));
            }
            out.push(SkinInfo {
                name: skin.name().unwrap_or("").to_owned(),
                skin: core,
                nodes: skin.joints().map(|n| n.index()).collect(),
                bind_pose: Pose::from_locals(locals),
            });
        }
        Ok(out)
    }

    fn meshes(
        &mut self,
        skeleton: &Skeleton,
        skins: &[SkinInfo],
        scene_nodes: &[usize],
    ) -> Result<Vec<MeshInstance>, GltfError> {
        let mut out = Vec::new();
        let nodes: Vec<gltf::Node> = self.doc.nodes().collect();
        for &ni in scene_nodes {
            let node = &nodes[ni];
            let Some(mesh) = node.mesh() else { continue };
            for prim in mesh.primitives() {
                let ppath = format!("meshes[{}].primitives[{}]", mesh.index(), prim.index());
                let skin = node.skin().map(|s| s.index());
                let (m, skinned) = self.primitive(&prim, &ppath, skin.map(|s| (s, &skins[s])))?;
                if skin.is_some() && !skinned {
                    self.warnings
                        .push(format!("nodes[{ni}] has a skin but {ppath} has no JOINTS_0/WEIGHTS_0; drawn unskinned"));
                }
                // Morph targets are not applied. With all default weights zero (the usual
                // case for rigged characters) that changes nothing until a weight channel
                // animates them; otherwise say that positions differ from the spec's.
                if prim.morph_targets().len() > 0 {
                    let weights = node.weights().or_else(|| mesh.weights()).unwrap_or(&[]);
                    if weights.iter().any(|w| *w != 0.0) {
                        self.warnings.push(format!(
                            "{ppath} has morph targets with non-zero default weights (nodes[{ni}]); morph targets \
                             are not applied, so its vertices differ from a viewer that applies them"
                        ));
                    } else {
                        self.warnings.push(format!("{ppath} has morph targets; they are not applied"));
                    }
                }
                out.push(MeshInstance {
                    node: ni,
                    joint: skeleton.from_source_index(ni).expect("node is a joint"),
                    mesh: mesh.index(),
                    primitive: prim.index(),
                    skin: if skinned { skin } else { None },
                    data: m,
                });
            }
        }
        Ok(out)
    }

    fn primitive(
        &mut self,
        prim: &gltf::Primitive<'a>,
        ppath: &str,
        skin: Option<(usize, &SkinInfo)>,
    ) -> Result<(Mesh, bool), GltfError> {
        let reader = prim.reader(self.data());
        let apath = |s: &str| format!("{ppath}.attributes.{s}");
        let pos_acc = prim
            .get(&Semantic::Positions)
            .ok_or_else(|| GltfError::Schema { path: apath("POSITION"), message: "missing".into() })?;
        check_accessor(&pos_acc, self.buffers, &POSITIONS, &apath("POSITION"))?;
        let n = pos_acc.count();
        let positions: Vec<[f32; 3]> = if pos_acc.data_type() == DataType::F32 {
            reader.read_positions().map_or_else(|| vec![[0.0; 3]; n], |it| it.collect())
        } else {
            quantized::<3>(&pos_acc, self.buffers)
        };
        check_finite(&positions, &format!("accessors[{}]", pos_acc.index()), "position")?;
        let check_count = |acc: &gltf::Accessor, what: &str| {
            if acc.count() != n {
                Err(GltfError::accessor(
                    format!("accessors[{}]", acc.index()),
                    format!("used as {} it has {} elements, POSITION has {n}", apath(what), acc.count()),
                ))
            } else {
                Ok(())
            }
        };
        let mut normals = Vec::new();
        if let Some(acc) = prim.get(&Semantic::Normals) {
            check_accessor(&acc, self.buffers, &NORMALS, &apath("NORMAL"))?;
            check_count(&acc, "NORMAL")?;
            let raw: Vec<[f32; 3]> = if acc.data_type() == DataType::F32 {
                reader.read_normals().map_or_else(|| vec![[0.0; 3]; n], |it| it.collect())
            } else {
                quantized::<3>(&acc, self.buffers)
            };
            check_finite(&raw, &format!("accessors[{}]", acc.index()), "normal")?;
            normals = raw.iter().map(|v| repair_normal(Vec3::from(*v))).collect();
        }
        let mut uvs = Vec::new();
        if let Some(acc) = prim.get(&Semantic::TexCoords(0)) {
            check_accessor(&acc, self.buffers, &TEXCOORDS, &apath("TEXCOORD_0"))?;
            check_count(&acc, "TEXCOORD_0")?;
            uvs = quantized::<2>(&acc, self.buffers);
        }
        // Influence sets.
        let mut sets = 0u32;
        while prim.get(&Semantic::Joints(sets)).is_some() || prim.get(&Semantic::Weights(sets)).is_some() {
            sets += 1;
            if sets > MAX_INFLUENCE_SETS {
                return Err(GltfError::Unsupported {
                    path: apath(&format!("JOINTS_{sets}")),
                    message: format!("more than {MAX_INFLUENCE_SETS} JOINTS_n/WEIGHTS_n sets"),
                });
            }
        }
        let mut influences = None;
        if sets > 0
            && let Some((si, skin)) = skin
        {
            let per = 4 * sets as usize;
            let mut joints = vec![0u16; n * per];
            let mut weights = vec![0f32; n * per];
            for set in 0..sets {
                let (jn, wn) = (format!("JOINTS_{set}"), format!("WEIGHTS_{set}"));
                let jacc = prim.get(&Semantic::Joints(set)).ok_or_else(|| GltfError::Schema {
                    path: apath(&jn),
                    message: format!("missing, but {wn} is present"),
                })?;
                let wacc = prim.get(&Semantic::Weights(set)).ok_or_else(|| GltfError::Schema {
                    path: apath(&wn),
                    message: format!("missing, but {jn} is present"),
                })?;
                const JOINTS: Want = Want {
                    dims: &[Dimensions::Vec4],
                    types: &[(DataType::U8, false), (DataType::U16, false)],
                    what: "VEC4 UNSIGNED_BYTE/UNSIGNED_SHORT",
                };
                const WEIGHTS: Want = Want {
                    dims: &[Dimensions::Vec4],
                    types: &[F32, (DataType::U8, true), (DataType::U16, true)],
                    what: "VEC4 FLOAT or normalized UNSIGNED_BYTE/UNSIGNED_SHORT",
                };
                check_accessor(&jacc, self.buffers, &JOINTS, &apath(&jn))?;
                check_accessor(&wacc, self.buffers, &WEIGHTS, &apath(&wn))?;
                check_count(&jacc, &jn)?;
                check_count(&wacc, &wn)?;
                let base = 4 * set as usize;
                // An accessor without data reads as zeros, which the buffers already hold.
                if let Some(it) = reader.read_joints(set) {
                    for (v, j) in it.into_u16().enumerate() {
                        joints[v * per + base..v * per + base + 4].copy_from_slice(&j);
                    }
                }
                if let Some(it) = reader.read_weights(set) {
                    for (v, w) in it.into_f32().enumerate() {
                        weights[v * per + base..v * per + base + 4].copy_from_slice(&w);
                    }
                }
            }
            let inf = Influences::new(per, joints, weights, skin.skin.len()).map_err(|e| match e {
                anim_core::SkinningError::JointOutOfRange { vertex, slot, joint, count } => GltfError::JointOutOfRange {
                    path: apath(&format!("JOINTS_{}", slot / 4)),
                    message: format!(
                        "vertex {vertex} uses joint {joint} with a non-zero weight, but skins[{si}] has {count} joints"
                    ),
                },
                anim_core::SkinningError::BadWeight { vertex, slot, weight } => GltfError::Accessor {
                    path: apath(&format!("WEIGHTS_{}", slot / 4)),
                    message: format!("vertex {vertex} has weight {weight} (negative or not finite)"),
                },
                other => GltfError::accessor(apath("JOINTS_0"), other.to_string()),
            })?;
            influences = Some(inf);
        } else if sets > 0 {
            self.warnings.push(format!("{ppath} has JOINTS/WEIGHTS but its node has no skin; drawn unskinned"));
        }
        // Indices.
        let mut indices = Vec::new();
        let raw_indices: Option<Vec<u32>> = match prim.indices() {
            Some(acc) => {
                const IDX: Want = Want {
                    dims: &[Dimensions::Scalar],
                    types: &[(DataType::U8, false), (DataType::U16, false), (DataType::U32, false)],
                    what: "SCALAR UNSIGNED_BYTE/SHORT/INT",
                };
                let ipath = format!("{ppath}.indices");
                check_accessor(&acc, self.buffers, &IDX, &ipath)?;
                let v: Vec<u32> =
                    reader.read_indices().map_or_else(|| vec![0; acc.count()], |r| r.into_u32().collect());
                if let Some(k) = v.iter().position(|&i| i as usize >= n) {
                    return Err(GltfError::accessor(
                        format!("accessors[{}]", acc.index()),
                        format!("index {k} is {}, but the primitive has {n} vertices", v[k]),
                    ));
                }
                Some(v)
            }
            None => None,
        };
        let seq = || raw_indices.clone().unwrap_or_else(|| (0..n as u32).collect());
        match prim.mode() {
            Mode::Triangles => indices = seq(),
            Mode::TriangleStrip => {
                let s = seq();
                for k in 2..s.len() {
                    if k % 2 == 0 {
                        indices.extend_from_slice(&[s[k - 2], s[k - 1], s[k]]);
                    } else {
                        indices.extend_from_slice(&[s[k - 1], s[k - 2], s[k]]);
                    }
                }
            }
            Mode::TriangleFan => {
                let s = seq();
                for k in 2..s.len() {
                    indices.extend_from_slice(&[s[k - 1], s[k], s[0]]);
                }
            }
            other => self.warnings.push(format!("{ppath} has mode {other:?}; loaded without triangles")),
        }
        indices.truncate(indices.len() / 3 * 3);
        let mesh =
            Mesh { positions: positions.into_iter().map(Vec3::from).collect(), normals, uvs, influences, indices };
        let skinned = mesh.influences.is_some();
        Ok((mesh, skinned))
    }

    fn clips(&mut self, skeleton: &Skeleton) -> Result<(Vec<Clip>, Vec<ClipInfo>), GltfError> {
        let mut clips = Vec::new();
        let mut infos = Vec::new();
        for anim in self.doc.animations() {
            let a = anim.index();
            let name = anim.name().unwrap_or("").to_owned();
            let mut tracks: Vec<JointTracks> = Vec::new();
            let mut seen = std::collections::HashMap::new();
            let mut channels = Vec::new();
            for ch in anim.channels() {
                let cpath = format!("animations[{a}].channels[{}]", ch.index());
                let node = ch.target().node().index();
                let prop = ch.target().property();
                if prop == Property::MorphTargetWeights {
                    self.warnings.push(format!("{cpath}: morph target weights are not supported; channel skipped"));
                    continue;
                }
                if let Some(prev) = seen.insert((node, prop_name(prop)), ch.index()) {
                    return Err(GltfError::Schema {
                        path: cpath,
                        message: format!(
                            "targets node {node} {} like channel {prev}; a target may be animated once per animation",
                            prop_name(prop)
                        ),
                    });
                }
                let sampler = ch.sampler();
                let spath = format!("animations[{a}].samplers[{}]", sampler.index());
                let interp = match sampler.interpolation() {
                    gltf::animation::Interpolation::Step => Interpolation::Step,
                    gltf::animation::Interpolation::Linear => Interpolation::Linear,
                    gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
                };
                let input = sampler.input();
                check_accessor(
                    &input,
                    self.buffers,
                    &Want { dims: &[Dimensions::Scalar], types: &[F32], what: "SCALAR FLOAT" },
                    &format!("{spath}.input"),
                )?;
                let output = sampler.output();
                let opath = format!("{spath}.output");
                let want = match prop {
                    Property::Rotation => Want {
                        dims: &[Dimensions::Vec4],
                        types: &[
                            F32,
                            (DataType::I8, true),
                            (DataType::U8, true),
                            (DataType::I16, true),
                            (DataType::U16, true),
                        ],
                        what: "VEC4 FLOAT or normalized integers",
                    },
                    _ => VEC3_F32,
                };
                check_accessor(&output, self.buffers, &want, &opath)?;
                let per_key = if interp == Interpolation::CubicSpline { 3 } else { 1 };
                if output.count() != input.count() * per_key {
                    return Err(GltfError::accessor(
                        opath,
                        format!(
                            "accessors[{}] has {} values for {} keys ({} expected with {:?})",
                            output.index(),
                            output.count(),
                            input.count(),
                            input.count() * per_key,
                            interp
                        ),
                    ));
                }
                let reader = ch.reader(self.data());
                let times: Vec<f32> =
                    reader.read_inputs().map_or_else(|| vec![0.0; ch.sampler().input().count()], |it| it.collect());
                let ipath = format!("{spath}.input");
                for (k, &t) in times.iter().enumerate() {
                    if !t.is_finite() {
                        return Err(GltfError::NonFinite { path: ipath, what: format!("key time {k}") });
                    }
                    if k > 0 && t <= times[k - 1] {
                        return Err(GltfError::KeysNotIncreasing { path: ipath, index: k, time: t });
                    }
                }
                let joint = skeleton.from_source_index(node).expect("node is a joint");
                let slot = match tracks.iter().position(|t| t.joint == joint) {
                    Some(s) => s,
                    None => {
                        tracks.push(JointTracks::new(joint));
                        tracks.len() - 1
                    }
                };
                let track_err = |e: TrackError| match e {
                    TrackError::NonFiniteValue { index } => {
                        GltfError::NonFinite { path: opath.clone(), what: format!("value {index}") }
                    }
                    TrackError::TimesNotIncreasing { index, time } => {
                        GltfError::KeysNotIncreasing { path: ipath.clone(), index, time }
                    }
                    other => GltfError::accessor(opath.clone(), other.to_string()),
                };
                let Some(outputs) = reader.read_outputs() else {
                    // An output accessor without data: all zeros (a zero rotation becomes
                    // the identity when sampled).
                    let count = ch.sampler().output().count();
                    match prop {
                        Property::Translation => {
                            tracks[slot].translation =
                                Some(Track::new(interp, times.clone(), vec![Vec3::zeros(); count]).map_err(track_err)?);
                        }
                        Property::Scale => {
                            tracks[slot].scale =
                                Some(Track::new(interp, times.clone(), vec![Vec3::zeros(); count]).map_err(track_err)?);
                        }
                        Property::Rotation => {
                            let zero = Quaternion::new(0.0, 0.0, 0.0, 0.0);
                            tracks[slot].rotation =
                                Some(Track::new(interp, times.clone(), vec![zero; count]).map_err(track_err)?);
                        }
                        Property::MorphTargetWeights => unreachable!("skipped above"),
                    }
                    continue;
                };
                match outputs {
                    gltf::animation::util::ReadOutputs::Translations(it) => {
                        let v: Vec<Vec3> = it.map(Vec3::from).collect();
                        tracks[slot].translation = Some(Track::new(interp, times.clone(), v).map_err(track_err)?);
                    }
                    gltf::animation::util::ReadOutputs::Scales(it) => {
                        let v: Vec<Vec3> = it.map(Vec3::from).collect();
                        tracks[slot].scale = Some(Track::new(interp, times.clone(), v).map_err(track_err)?);
                    }
                    gltf::animation::util::ReadOutputs::Rotations(r) => {
                        let v: Vec<Quaternion<f32>> =
                            r.into_f32().map(|q| Quaternion::new(q[3], q[0], q[1], q[2])).collect();
                        tracks[slot].rotation = Some(Track::new(interp, times.clone(), v).map_err(track_err)?);
                    }
                    gltf::animation::util::ReadOutputs::MorphTargetWeights(_) => unreachable!("skipped above"),
                }
                channels.push(crate::ChannelInfo {
                    node,
                    property: prop_name(prop),
                    interpolation: interp,
                    keys: times.len(),
                    start: times[0],
                    end: *times.last().expect("count checked ≥ 1"),
                });
            }
            let curves = self.curves_from_extras(&anim)?;
            let clip = Clip::new(name.clone(), tracks, curves)
                .map_err(|e| GltfError::Schema { path: format!("animations[{a}]"), message: e.to_string() })?;
            infos.push(ClipInfo { name: anim.name().map(str::to_owned), channels });
            clips.push(clip);
        }
        Ok((clips, infos))
    }

    /// Named scalar curves stored by [`crate::export_glb`] in the animation's extras.
    fn curves_from_extras(&mut self, anim: &gltf::Animation) -> Result<Vec<ScalarCurve>, GltfError> {
        let Some(raw) = anim.extras() else { return Ok(Vec::new()) };
        let path = format!("animations[{}].extras", anim.index());
        let value: serde_json::Value = serde_json::from_str(raw.get())
            .map_err(|e| GltfError::Schema { path: path.clone(), message: e.to_string() })?;
        let Some(list) = value.get(crate::CURVES_KEY).and_then(|v| v.as_array()) else { return Ok(Vec::new()) };
        let mut curves = Vec::new();
        for (i, c) in list.iter().enumerate() {
            let cpath = format!("{path}.{}[{i}]", crate::CURVES_KEY);
            let bad = |m: &str| GltfError::Schema { path: cpath.clone(), message: m.to_owned() };
            let name = c.get("name").and_then(|v| v.as_str()).ok_or_else(|| bad("missing name"))?;
            let interp = match c.get("interpolation").and_then(|v| v.as_str()).unwrap_or("LINEAR") {
                "STEP" => Interpolation::Step,
                "LINEAR" => Interpolation::Linear,
                "CUBICSPLINE" => Interpolation::CubicSpline,
                _ => return Err(bad("unknown interpolation")),
            };
            let floats = |key: &str| -> Result<Vec<f32>, GltfError> {
                c.get(key)
                    .and_then(|v| v.as_array())
                    .ok_or_else(|| bad(&format!("missing {key}")))?
                    .iter()
                    .map(|v| v.as_f64().map(|x| x as f32).ok_or_else(|| bad(&format!("{key} holds a non-number"))))
                    .collect()
            };
            let track = Track::new(interp, floats("times")?, floats("values")?).map_err(|e| bad(&e.to_string()))?;
            curves.push(ScalarCurve { name: name.to_owned(), track });
        }
        Ok(curves)
    }
}

fn prop_name(p: Property) -> &'static str {
    match p {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
        Property::MorphTargetWeights => "weights",
    }
}

/// Unit normal; a zero-length normal becomes +Y (a degenerate normal is repaired, not kept).
fn repair_normal(n: Vec3) -> Vec3 {
    let l = n.norm();
    if l > 1e-12 { n / l } else { Vec3::y() }
}
