//! glTF → [`Model`], by concern:
//!
//! - [`validate`]: schema validation and the index checks that must run before it;
//! - [`buffers`]: buffer loading (GLB chunk, `data:` URIs, files) and accessor checks and
//!   reads;
//! - [`scene`]: nodes to a skeleton, the default scene, skins and their bind poses;
//! - [`material`]: materials, textures and samplers; [`images`]: the images they use,
//!   read and decoded within the memory budget;
//! - [`mesh`]: primitives to meshes (attributes, influences, indices, tangents, colours);
//! - [`animation`]: animations to clips, and the named curves in their extras.
//!
//! [`load_bytes`] runs them in that order; the [`Importer`] carries the document, its
//! buffers and the warnings collected on the way.

mod animation;
mod buffers;
pub(crate) mod images;
mod material;
mod mesh;
mod morph;
mod range;
mod scene;
mod tangents;
mod validate;

use crate::error::GltfError;
use crate::model::Model;
use crate::options::LoadOptions;
use std::path::Path;

pub(crate) use buffers::read_document;

/// Most `JOINTS_n`/`WEIGHTS_n` sets a primitive may have (64 influences a vertex).
pub const MAX_INFLUENCE_SETS: u32 = 16;

/// Parses, validates and imports a glTF JSON document or GLB container.
pub(crate) fn load_bytes(bytes: &[u8], base_dir: Option<&Path>, options: &LoadOptions) -> Result<Model, GltfError> {
    // Every error leaves as a JSON pointer (`/meshes/0/primitives/1/material`), the form the
    // Khronos glTF-Validator reports, whatever form the check that found it wrote.
    load_unnormalized(bytes, base_dir, options).map_err(GltfError::into_json_pointer)
}

fn load_unnormalized(bytes: &[u8], base_dir: Option<&Path>, options: &LoadOptions) -> Result<Model, GltfError> {
    // The GLB container and the raw JSON are checked before the `gltf` crate sees them:
    // its defaults hide missing required properties, and it unwraps values it never checks.
    validate::raw(bytes)?;
    let gltf = gltf::Gltf::from_slice_without_validation(bytes).map_err(validate::convert_gltf_error)?;
    // Indices the `gltf` crate's own validation would index with (and panic on) or does not
    // check at all are checked first.
    validate::precheck(gltf.document.as_json())?;
    let mut warnings = Vec::new();
    validate::validate(gltf.document.as_json(), &mut warnings)?;
    let doc = gltf::Document::from_json_without_validation(gltf.document.into_json());
    let buffers = buffers::load_buffers(&doc, gltf.blob, base_dir, options)?;
    Importer { doc: &doc, buffers: &buffers, base: base_dir, options, warnings }.run()
}

/// The import of one document: the parts of the model are read from `doc` by the methods
/// in the submodules, in the order of [`Importer::run`].
struct Importer<'a> {
    doc: &'a gltf::Document,
    buffers: &'a buffers::Buffers,
    /// The folder external URIs are resolved in.
    base: Option<&'a Path>,
    options: &'a LoadOptions,
    warnings: Vec<String>,
}

impl<'a> Importer<'a> {
    /// The buffer data of the document, as the `gltf` crate's readers take it.
    fn data(&self) -> impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'a [u8]> + use<'a> {
        let buffers = self.buffers;
        move |b: gltf::Buffer<'a>| buffers.get(b.index()).map(Vec::as_slice)
    }

    /// Reads the skeleton, the scene, skins, materials (and their images), meshes and clips,
    /// in that order.
    fn run(mut self) -> Result<Model, GltfError> {
        let (skeleton, nodes) = self.skeleton()?;
        let scene_nodes = self.scene_nodes(&skeleton);
        let skins = self.skins(&skeleton)?;
        let (materials, textures) = self.materials()?;
        let mut needed = vec![false; self.doc.images().len()];
        for t in &textures {
            needed[t.image] = true;
        }
        let images = self.images(&needed)?;
        let meshes = self.meshes(&skeleton, &skins, &scene_nodes, &materials)?;
        let (clips, clip_info) = self.clips(&skeleton)?;
        // The skeleton's own bind pose: the first skin's, the rest pose elsewhere.
        let skeleton = match skins.first() {
            Some(s) => skeleton.with_bind_pose(s.bind_pose.clone()).map_err(|e| GltfError::Argument(e.to_string()))?,
            None => skeleton,
        };
        self.check_range(&skeleton, &clips, &skins, &meshes)?;
        Ok(Model {
            skeleton,
            nodes,
            scene: self.doc.default_scene().map(|s| s.index()),
            scene_nodes,
            skins,
            meshes,
            materials,
            textures,
            images,
            clips: clips.into_iter().map(std::sync::Arc::new).collect(),
            clip_info,
            warnings: self.warnings,
        })
    }
}
