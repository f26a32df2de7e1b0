//! Validation before import: the `gltf` crate's schema validation (relaxed for parts this
//! runtime never reads) and the index checks it would otherwise panic on.

use crate::GltfError;

/// Extensions that compress geometry: a file that requires one of them cannot be read
/// without a decoder this importer does not have. (`KHR_mesh_quantization` is supported.)
const GEOMETRY_EXTENSIONS: [&str; 2] = ["KHR_draco_mesh_compression", "EXT_meshopt_compression"];

/// The `gltf` crate's schema validation, except that problems confined to parts this
/// runtime never reads (materials, textures, images, samplers, cameras) and required
/// extensions that do not touch geometry become warnings.
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

/// Indices the `gltf` crate's validation would index with (and panic on) or does not
/// check at all: mesh attribute accessors and animation channel target nodes.
pub(super) fn precheck(root: &gltf::json::Root) -> Result<(), GltfError> {
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
