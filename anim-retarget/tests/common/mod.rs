//! The shared humanoids, loaded and rigged once per test binary.

#![allow(dead_code)]

use anim_gltf::Model;
use anim_retarget::{HumanoidRig, Reference, auto_map};

/// The four humanoids: the mannequin and the shared models CesiumMan, RiggedFigure and Woman.
pub const HUMANOIDS: [&str; 4] = ["mannequin", "CesiumMan", "RiggedFigure", "Woman"];

/// Loads a humanoid by its name in [`HUMANOIDS`].
pub fn load(name: &str) -> Model {
    let assets = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets");
    match name {
        "mannequin" => anim_gltf::mannequin_model(),
        "CesiumMan" => anim_gltf::load(format!("{assets}/CesiumMan/CesiumMan.glb")).expect("CesiumMan loads"),
        "RiggedFigure" => {
            anim_gltf::load(format!("{assets}/RiggedFigure/RiggedFigure.glb")).expect("RiggedFigure loads")
        }
        "Woman" => anim_gltf::load(format!("{assets}/Woman/Woman.gltf")).expect("Woman loads"),
        other => panic!("unknown humanoid {other}"),
    }
}

/// A model's rig: automatic map, bind-pose reference from its first skin.
pub fn rig(model: &Model) -> HumanoidRig {
    let auto = auto_map(&model.skeleton);
    HumanoidRig::new(&model.skeleton, auto.map, Reference::Bind(&model.skins[0].skin)).expect("the humanoid rigs")
}
