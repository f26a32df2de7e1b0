//! Validation before import: the `gltf` crate's schema validation (relaxed for parts this
//! runtime never reads) and the index checks it would otherwise panic on.

use crate::error::GltfError;

/// Extensions that compress geometry: a file that requires one of them cannot be read
/// without a decoder this importer does not have. (`KHR_mesh_quantization` is supported.)
const GEOMETRY_EXTENSIONS: [&str; 2] = ["KHR_draco_mesh_compression", "EXT_meshopt_compression"];

/// The `gltf` crate's schema validation: every problem it finds is an error, as in the
/// Khronos glTF-Validator, except required extensions that do not touch geometry, which
/// become warnings (a material extension this importer does not read is drawn without it).
pub(super) fn validate(root: &gltf::json::Root, warnings: &mut Vec<String>) -> Result<(), GltfError> {
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
        // A required extension that does not touch geometry can be ignored by a runtime that
        // reads no materials or images. Everything else the schema check reports is an error
        // in the Khronos glTF-Validator too (an unresolved material or camera index, an
        // invalid material enum, ...), so it is one here as well, even in parts never read.
        let ignorable = path.starts_with("extensionsRequired");
        let zero_accessor = path.starts_with("accessors[")
            && path.ends_with("].bufferView")
            && matches!(error, gltf::json::validation::Error::Missing);
        if zero_accessor {
            // Valid glTF: an accessor without a bufferView reads as zeros (plus any sparse
            // substitutions); `check_accessor` and the readers handle it.
        } else if ignorable && path.starts_with("extensionsRequired") && path.contains("KHR_mesh_quantization") {
            // Supported here (integer vertex attributes), though not by the `gltf` crate.
        } else if ignorable {
            warnings.push(format!("{path}: {error} (not read by this importer; ignored)"));
        } else {
            fatal.push((path, error));
        }
    }
    match fatal.first() {
        None => Ok(()),
        Some((path, error)) => {
            let more =
                if fatal.len() > 1 { format!(" (and {} more problems)", fatal.len() - 1) } else { String::new() };
            // The Khronos glTF-Validator's code for each kind of schema problem.
            let code = match error {
                gltf::json::validation::Error::IndexOutOfBounds => "UNRESOLVED_REFERENCE",
                gltf::json::validation::Error::Invalid => "VALUE_NOT_IN_LIST",
                gltf::json::validation::Error::Missing => "UNDEFINED_PROPERTY",
                gltf::json::validation::Error::Oversize => "VALUE_NOT_IN_RANGE",
                gltf::json::validation::Error::Unsupported => "UNSUPPORTED_EXTENSION",
            };
            Err(GltfError::Schema { path: path.clone(), message: format!("{code}: {error}{more}") })
        }
    }
}

/// A schema error with the Khronos glTF-Validator's issue code in front of the message.
fn issue(path: impl Into<String>, code: &str, message: impl std::fmt::Display) -> GltfError {
    GltfError::Schema { path: path.into(), message: format!("{code}: {message}") }
}

/// Checks of the GLB container and of the raw JSON, before the `gltf` crate parses it (its
/// serde defaults hide missing required properties such as `buffers[i].byteLength`).
pub(super) fn raw(bytes: &[u8]) -> Result<(), GltfError> {
    let json = if bytes.starts_with(b"glTF") { glb_json(bytes)? } else { bytes };
    let v: serde_json::Value = serde_json::from_slice(json).map_err(|e| GltfError::Syntax(e.to_string()))?;
    raw_json(&v)
}

fn le32(b: &[u8], at: usize) -> Option<usize> {
    b.get(at..at + 4).map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]) as usize)
}

/// The JSON chunk of a GLB container whose header and chunk lengths agree with the data;
/// a container that breaks the GLB layout is a [`GltfError::Syntax`] error.
fn glb_json(bytes: &[u8]) -> Result<&[u8], GltfError> {
    let header = |code: &str, m: String| GltfError::Syntax(format!("GLB header: {code}: {m}"));
    let version = le32(bytes, 4).ok_or_else(|| header("GLB_UNEXPECTED_END_OF_HEADER", "truncated".into()))?;
    let length = le32(bytes, 8).ok_or_else(|| header("GLB_UNEXPECTED_END_OF_HEADER", "truncated".into()))?;
    if version != 2 {
        return Err(header("GLB_UNKNOWN_VERSION", format!("container version {version}, only 2 is supported")));
    }
    if length != bytes.len() {
        return Err(header(
            "GLB_LENGTH_MISMATCH",
            format!("declared length {length} does not match the actual length {}", bytes.len()),
        ));
    }
    let chunk = |code: &str, m: String| GltfError::Syntax(format!("GLB chunk 0: {code}: {m}"));
    let json_len = le32(bytes, 12).ok_or_else(|| chunk("GLB_UNEXPECTED_END_OF_CHUNK_HEADER", "truncated".into()))?;
    if bytes.get(16..20) != Some(b"JSON".as_slice()) {
        return Err(chunk("GLB_UNEXPECTED_FIRST_CHUNK", "the first chunk is not JSON".into()));
    }
    if !json_len.is_multiple_of(4) {
        return Err(chunk("GLB_CHUNK_LENGTH_UNALIGNED", format!("length {json_len} is not a multiple of 4")));
    }
    let end = 20usize.checked_add(json_len).filter(|&e| e <= bytes.len());
    let end = end.ok_or_else(|| chunk("GLB_CHUNK_TOO_BIG", format!("length {json_len} exceeds the file")))?;
    let mut at = end;
    let mut k = 1;
    while at < bytes.len() {
        let len = le32(bytes, at)
            .filter(|_| at + 8 <= bytes.len())
            .ok_or_else(|| glb_chunk(k, "GLB_UNEXPECTED_END_OF_CHUNK_HEADER", "truncated"))?;
        if !len.is_multiple_of(4) {
            return Err(glb_chunk(k, "GLB_CHUNK_LENGTH_UNALIGNED", format!("length {len}")));
        }
        at = (at + 8)
            .checked_add(len)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| glb_chunk(k, "GLB_CHUNK_TOO_BIG", format!("length {len} exceeds the file")))?;
        k += 1;
    }
    Ok(&bytes[20..end])
}

fn glb_chunk(k: usize, code: &str, m: impl std::fmt::Display) -> GltfError {
    GltfError::Syntax(format!("GLB chunk {k}: {code}: {m}"))
}

/// Parses "major.minor".
fn version(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once('.')?;
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|c| c.is_ascii_digit());
    if !digits(a) || !digits(b) {
        return None;
    }
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn raw_json(v: &serde_json::Value) -> Result<(), GltfError> {
    use serde_json::Value;
    let Some(root) = v.as_object() else { return Err(GltfError::Syntax("the document is not a JSON object".into())) };
    let arr = |key: &str| root.get(key).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    // Asset.
    let asset = root.get("asset").ok_or_else(|| issue("asset", "UNDEFINED_PROPERTY", "missing"))?;
    let ver_str = asset.get("version").and_then(Value::as_str);
    let ver = ver_str
        .and_then(version)
        .ok_or_else(|| issue("asset.version", "INVALID_PATTERN", "missing or not \"major.minor\""))?;
    if ver.0 != 2 {
        return Err(issue(
            "asset.version",
            "UNKNOWN_ASSET_MAJOR_VERSION",
            format!("version {}.{}: only glTF 2.x is supported", ver.0, ver.1),
        ));
    }
    if let Some(min) = asset.get("minVersion") {
        let m = min
            .as_str()
            .and_then(version)
            .ok_or_else(|| issue("asset.minVersion", "INVALID_PATTERN", "not \"major.minor\""))?;
        if m > ver {
            return Err(issue(
                "asset.minVersion",
                "ASSET_MIN_VERSION_GREATER_THAN_VERSION",
                format!("{}.{} is greater than version {}.{}", m.0, m.1, ver.0, ver.1),
            ));
        }
        if m > (2, 0) {
            return Err(GltfError::Unsupported {
                path: "asset.minVersion".into(),
                message: format!(
                    "UNKNOWN_ASSET_MINOR_VERSION: the file requires glTF {}.{}; 2.0 is supported",
                    m.0, m.1
                ),
            });
        }
    }
    // Required properties the `gltf` crate defaults.
    let positive_int = |val: Option<&Value>, path: String, min: u64| -> Result<(), GltfError> {
        match val {
            None => Err(issue(path, "UNDEFINED_PROPERTY", "missing")),
            Some(x) if x.as_u64().is_some_and(|n| n >= min) => Ok(()),
            Some(_) => Err(issue(path, "VALUE_NOT_IN_RANGE", format!("must be an integer ≥ {min}"))),
        }
    };
    for (i, b) in arr("buffers").iter().enumerate() {
        positive_int(b.get("byteLength"), format!("buffers[{i}].byteLength"), 1)?;
    }
    for (i, b) in arr("bufferViews").iter().enumerate() {
        positive_int(b.get("byteLength"), format!("bufferViews[{i}].byteLength"), 1)?;
        positive_int(b.get("buffer"), format!("bufferViews[{i}].buffer"), 0)?;
    }
    for (i, a) in arr("accessors").iter().enumerate() {
        positive_int(a.get("count"), format!("accessors[{i}].count"), 1)?;
        positive_int(a.get("componentType"), format!("accessors[{i}].componentType"), 0)?;
        if a.get("type").is_none() {
            return Err(issue(format!("accessors[{i}].type"), "UNDEFINED_PROPERTY", "missing"));
        }
        let ct = a.get("componentType").and_then(Value::as_u64);
        if a.get("normalized").and_then(Value::as_bool) == Some(true) && matches!(ct, Some(5125 | 5126)) {
            return Err(issue(
                format!("accessors[{i}].normalized"),
                "ACCESSOR_NORMALIZED_INVALID",
                "only BYTE, UNSIGNED_BYTE, SHORT and UNSIGNED_SHORT accessors may be normalized",
            ));
        }
    }
    // Nodes: a matrix excludes TRS; the matrix must be affine.
    for (i, n) in arr("nodes").iter().enumerate() {
        let Some(m) = n.get("matrix") else { continue };
        if ["translation", "rotation", "scale"].iter().any(|k| n.get(*k).is_some()) {
            return Err(issue(
                format!("nodes[{i}]"),
                "NODE_MATRIX_TRS",
                "has both a matrix and translation/rotation/scale",
            ));
        }
        let m: Vec<f64> = m.as_array().map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default();
        if m.len() == 16 && (m[3] != 0.0 || m[7] != 0.0 || m[11] != 0.0 || m[15] != 1.0) {
            return Err(issue(
                format!("nodes[{i}].matrix"),
                "NODE_MATRIX_NON_TRS",
                "the last row is not (0, 0, 0, 1): a projective matrix is not a TRS transform",
            ));
        }
    }
    // Meshes: at least one primitive; indexed attribute sets contiguous from 0, JOINTS_n
    // and WEIGHTS_n in pairs.
    for (mi, mesh) in arr("meshes").iter().enumerate() {
        let prims = mesh.get("primitives").and_then(Value::as_array);
        let Some(prims) = prims.filter(|p| !p.is_empty()) else {
            return Err(issue(
                format!("meshes[{mi}].primitives"),
                "EMPTY_ENTITY",
                "a mesh needs at least one primitive",
            ));
        };
        for (pi, prim) in prims.iter().enumerate() {
            let Some(attrs) = prim.get("attributes").and_then(Value::as_object) else { continue };
            let ppath = format!("meshes[{mi}].primitives[{pi}].attributes");
            let sets = |prefix: &str| -> Vec<u64> {
                let mut v: Vec<u64> = attrs
                    .keys()
                    .filter_map(|k| k.strip_prefix(prefix)?.strip_prefix('_')?.parse::<u64>().ok())
                    .collect();
                v.sort_unstable();
                v
            };
            for prefix in ["JOINTS", "WEIGHTS", "TEXCOORD", "COLOR"] {
                let s = sets(prefix);
                if let Some(k) = s.iter().enumerate().find(|(k, n)| **n != *k as u64).map(|(k, _)| k) {
                    return Err(issue(
                        format!("{ppath}.{prefix}_{}", s[k]),
                        "MESH_PRIMITIVE_INDEXED_SEMANTIC_CONTINUITY",
                        format!("{prefix}_n sets must be numbered from 0 without gaps, but {prefix}_{k} is missing"),
                    ));
                }
            }
            let (j, w) = (sets("JOINTS").len(), sets("WEIGHTS").len());
            if j != w {
                let (have, lack) = if j > w { ("JOINTS", "WEIGHTS") } else { ("WEIGHTS", "JOINTS") };
                return Err(issue(
                    format!("{ppath}.{have}_{}", j.min(w)),
                    "MESH_PRIMITIVE_JOINTS_WEIGHTS_MISMATCH",
                    format!("has no matching {lack}_{}", j.min(w)),
                ));
            }
        }
    }
    Ok(())
}

/// Every enumerated value and index of the parts the importer reads, which the `gltf`
/// crate's accessors unwrap (and panic on) and which its validation does not all check
/// (animation channels, for one). Material and camera indices are left to [`validate`],
/// which reports them with the rest of the schema.
pub(super) fn precheck(root: &gltf::json::Root) -> Result<(), GltfError> {
    use gltf::json::validation::Checked;
    fn valid<T>(c: &Checked<T>, path: impl FnOnce() -> String) -> Result<(), GltfError> {
        valid_as(c, "VALUE_NOT_IN_LIST", path)
    }
    fn valid_as<T>(c: &Checked<T>, code: &str, path: impl FnOnce() -> String) -> Result<(), GltfError> {
        match c {
            Checked::Valid(_) => Ok(()),
            Checked::Invalid => Err(issue(path(), code, "not one of the values glTF 2.0 allows")),
        }
    }
    fn index(i: usize, len: usize, what: &str, path: impl FnOnce() -> String) -> Result<(), GltfError> {
        if i < len {
            Ok(())
        } else {
            Err(issue(path(), "UNRESOLVED_REFERENCE", format!("{what} {i} does not exist ({len} {what}s)")))
        }
    }
    let (accessors, views, buffers) = (root.accessors.len(), root.buffer_views.len(), root.buffers.len());
    let (nodes, meshes, skins, scenes) = (root.nodes.len(), root.meshes.len(), root.skins.len(), root.scenes.len());
    for (i, a) in root.accessors.iter().enumerate() {
        let p = || format!("accessors[{i}]");
        valid(&a.component_type, || format!("{}.componentType", p()))?;
        valid(&a.type_, || format!("{}.type", p()))?;
        if let Some(v) = a.buffer_view {
            index(v.value(), views, "bufferView", || format!("{}.bufferView", p()))?;
        }
        if let Some(s) = &a.sparse {
            valid(&s.indices.component_type, || format!("{}.sparse.indices.componentType", p()))?;
            index(s.indices.buffer_view.value(), views, "bufferView", || format!("{}.sparse.indices.bufferView", p()))?;
            index(s.values.buffer_view.value(), views, "bufferView", || format!("{}.sparse.values.bufferView", p()))?;
        }
    }
    for (i, v) in root.buffer_views.iter().enumerate() {
        index(v.buffer.value(), buffers, "buffer", || format!("bufferViews[{i}].buffer"))?;
        if let Some(t) = &v.target {
            valid(t, || format!("bufferViews[{i}].target"))?;
        }
    }
    for (i, n) in root.nodes.iter().enumerate() {
        for (k, c) in n.children.iter().flatten().enumerate() {
            index(c.value(), nodes, "node", || format!("nodes[{i}].children[{k}]"))?;
        }
        if let Some(m) = n.mesh {
            index(m.value(), meshes, "mesh", || format!("nodes[{i}].mesh"))?;
        }
        if let Some(s) = n.skin {
            index(s.value(), skins, "skin", || format!("nodes[{i}].skin"))?;
        }
    }
    for (mi, mesh) in root.meshes.iter().enumerate() {
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            let p = || format!("meshes[{mi}].primitives[{pi}]");
            for (semantic, a) in &prim.attributes {
                let name = match semantic {
                    Checked::Valid(s) => s.to_string(),
                    Checked::Invalid => {
                        return Err(issue(
                            format!("{}.attributes", p()),
                            "MESH_PRIMITIVE_INVALID_ATTRIBUTE",
                            "an attribute name is not a glTF 2.0 semantic (nor starts with '_')",
                        ));
                    }
                };
                index(a.value(), accessors, "accessor", || format!("{}.attributes.{name}", p()))?;
            }
            if let Some(a) = prim.indices {
                index(a.value(), accessors, "accessor", || format!("{}.indices", p()))?;
            }
            valid_as(&prim.mode, "VALUE_NOT_IN_RANGE", || format!("{}.mode", p()))?;
            for (t, target) in prim.targets.iter().flatten().enumerate() {
                for (name, a) in
                    [("POSITION", target.positions), ("NORMAL", target.normals), ("TANGENT", target.tangents)]
                {
                    if let Some(a) = a {
                        index(a.value(), accessors, "accessor", || format!("{}.targets[{t}].{name}", p()))?;
                    }
                }
            }
        }
    }
    for (si, skin) in root.skins.iter().enumerate() {
        if let Some(a) = skin.inverse_bind_matrices {
            index(a.value(), accessors, "accessor", || format!("skins[{si}].inverseBindMatrices"))?;
        }
        for (k, j) in skin.joints.iter().enumerate() {
            index(j.value(), nodes, "node", || format!("skins[{si}].joints[{k}]"))?;
        }
        if let Some(s) = skin.skeleton {
            index(s.value(), nodes, "node", || format!("skins[{si}].skeleton"))?;
        }
    }
    for (ai, anim) in root.animations.iter().enumerate() {
        let samplers = anim.samplers.len();
        for (k, s) in anim.samplers.iter().enumerate() {
            let p = || format!("animations[{ai}].samplers[{k}]");
            index(s.input.value(), accessors, "accessor", || format!("{}.input", p()))?;
            index(s.output.value(), accessors, "accessor", || format!("{}.output", p()))?;
            valid(&s.interpolation, || format!("{}.interpolation", p()))?;
        }
        for (c, ch) in anim.channels.iter().enumerate() {
            let p = || format!("animations[{ai}].channels[{c}]");
            index(ch.sampler.value(), samplers, "sampler", || format!("{}.sampler", p()))?;
            index(ch.target.node.value(), nodes, "node", || format!("{}.target.node", p()))?;
            valid(&ch.target.path, || format!("{}.target.path", p()))?;
        }
    }
    for (i, image) in root.images.iter().enumerate() {
        // The schema: exactly one of `uri` and `bufferView`, and `mimeType` with a
        // `bufferView` (the `gltf` crate assumes both when it reads the image's source).
        let p = || format!("images[{i}]");
        match (&image.uri, image.buffer_view) {
            (Some(_), None) => {}
            (None, Some(v)) => {
                index(v.value(), views, "bufferView", || format!("{}.bufferView", p()))?;
                if image.mime_type.is_none() {
                    return Err(issue(p(), "UNSATISFIED_DEPENDENCY", "a bufferView image needs a mimeType"));
                }
            }
            (Some(_), Some(_)) => {
                return Err(issue(p(), "ONE_OF_MISMATCH", "defines both uri and bufferView (exactly one is allowed)"));
            }
            (None, None) => {
                return Err(issue(
                    p(),
                    "ONE_OF_MISMATCH",
                    "defines neither uri nor bufferView (exactly one is needed)",
                ));
            }
        }
    }
    for (si, scene) in root.scenes.iter().enumerate() {
        for (k, n) in scene.nodes.iter().enumerate() {
            index(n.value(), nodes, "node", || format!("scenes[{si}].nodes[{k}]"))?;
        }
    }
    if let Some(s) = root.scene {
        index(s.value(), scenes, "scene", || "scene".into())?;
    }
    Ok(())
}

/// The `gltf` crate's parse and validation errors as [`GltfError`]s.
pub(super) fn convert_gltf_error(e: gltf::Error) -> GltfError {
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
