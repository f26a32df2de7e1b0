//! A tiny skinned, animated triangle as glTF JSON with an embedded buffer, for tests that
//! build files in code.
#![allow(dead_code)]

use serde_json::{Value, json};

/// The binary data of a tiny skinned, animated triangle.
pub struct Data {
    pub pos: Vec<f32>,
    pub joints: Vec<u16>,
    pub weights: Vec<f32>,
    pub ibm: Vec<f32>,
    pub times: Vec<f32>,
    pub rot: Vec<f32>,
    pub idx: Vec<u16>,
}

impl Default for Data {
    fn default() -> Self {
        let mut ibm = vec![0.0f32; 32];
        for m in 0..2 {
            for d in 0..4 {
                ibm[m * 16 + d * 5] = 1.0;
            }
        }
        ibm[16 + 13] = -1.0; // joint 1 bound at y = 1
        Data {
            pos: vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0],
            joints: vec![0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0],
            weights: vec![1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
            ibm,
            times: vec![0.0, 1.0],
            rot: vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.70710677, 0.70710677],
            idx: vec![0, 1, 2],
        }
    }
}

pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// A valid document over `d`, with the buffer as a data URI.
pub fn doc(d: &Data) -> Value {
    let mut bin = Vec::new();
    let mut views = Vec::new();
    let mut push = |bytes: Vec<u8>| {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len()}));
        bin.extend_from_slice(&bytes);
    };
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let h = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    push(f(&d.pos));
    push(h(&d.joints));
    push(f(&d.weights));
    push(f(&d.ibm));
    push(f(&d.times));
    push(f(&d.rot));
    push(h(&d.idx));
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [
            {"mesh": 0, "skin": 0},
            {"children": [2]},
            {"translation": [0.0, 1.0, 0.0]}
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}, "indices": 6}]}],
        "skins": [{"joints": [1, 2], "inverseBindMatrices": 3}],
        "animations": [{
            "samplers": [{"input": 4, "output": 5, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}]
        }],
        "buffers": [{"byteLength": bin.len(), "uri": format!("data:application/octet-stream;base64,{}", base64(&bin))}],
        "bufferViews": views,
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": d.pos.len() / 3, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [1.0, 2.0, 0.0]},
            {"bufferView": 1, "componentType": 5123, "count": d.joints.len() / 4, "type": "VEC4"},
            {"bufferView": 2, "componentType": 5126, "count": d.weights.len() / 4, "type": "VEC4"},
            {"bufferView": 3, "componentType": 5126, "count": d.ibm.len() / 16, "type": "MAT4"},
            {"bufferView": 4, "componentType": 5126, "count": d.times.len(), "type": "SCALAR", "min": [0.0], "max": [1.0]},
            {"bufferView": 5, "componentType": 5126, "count": d.rot.len() / 4, "type": "VEC4"},
            {"bufferView": 6, "componentType": 5123, "count": d.idx.len(), "type": "SCALAR"}
        ]
    })
}
