//! Seed conversion: turns a glTF asset (`.glb`, or `.gltf` with external files or `data:`
//! URIs) into the two self-contained forms the fuzz target reads, a `.gltf` whose one
//! buffer is a base64 `data:` URI and a `.glb` whose one buffer is the binary chunk.
//!
//! Only what the importer reads is kept, so that seeds stay small and mutations land on
//! data that matters: the buffer views accessors use are packed into one buffer (image
//! bytes go), and every image becomes the same tiny embedded PNG (a 2 × 2 RGBA `data:`
//! URI, [`TINY_PNG`]), so that materials, textures and samplers stay and the image decoder
//! is reached. Everything else of the JSON is kept as it was.

use serde_json::{Value, json};
use std::path::Path;

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// The two forms of one asset.
pub(crate) struct Seed {
    /// Self-contained `.gltf`: JSON text with the buffer as a `data:` URI.
    pub gltf: Vec<u8>,
    /// `.glb`: the same JSON with the buffer as the binary chunk.
    pub glb: Vec<u8>,
}

/// Converts the asset `bytes` (`.glb` or `.gltf`; external files are read relative to
/// `dir`). The error names what could not be read.
pub fn convert(bytes: &[u8], dir: &Path) -> Result<Seed, String> {
    let (mut doc, bin) = split(bytes)?;
    let buffers = read_buffers(&doc, bin, dir)?;
    let packed = pack(&mut doc, &buffers)?;
    strip_unread(&mut doc);

    let mut gltf_doc = doc.clone();
    let mut glb_doc = doc;
    if packed.is_empty() {
        for d in [&mut gltf_doc, &mut glb_doc] {
            if let Some(o) = d.as_object_mut() {
                o.remove("buffers");
            }
        }
    } else {
        gltf_doc["buffers"] = json!([{
            "byteLength": packed.len(),
            "uri": format!("data:application/octet-stream;base64,{}", base64_encode(&packed)),
        }]);
        glb_doc["buffers"] = json!([{ "byteLength": packed.len() }]);
    }
    let gltf = serde_json::to_vec(&gltf_doc).map_err(|e| e.to_string())?;
    let glb = glb(&serde_json::to_vec(&glb_doc).map_err(|e| e.to_string())?, &packed);
    Ok(Seed { gltf, glb })
}

/// The JSON document and, for a `.glb`, its binary chunk.
fn split(bytes: &[u8]) -> Result<(Value, Option<&[u8]>), String> {
    if !bytes.starts_with(GLB_MAGIC) {
        let doc = serde_json::from_slice(bytes).map_err(|e| format!("JSON: {e}"))?;
        return Ok((doc, None));
    }
    let word = |at: usize| -> Result<u32, String> {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| format!("GLB cut short at byte {at}"))
    };
    let total = (word(8)? as usize).min(bytes.len());
    let (mut at, mut json_chunk, mut bin_chunk) = (12, None, None);
    while at + 8 <= total {
        let (len, kind) = (word(at)? as usize, word(at + 4)?);
        let body = bytes.get(at + 8..at + 8 + len).ok_or("GLB chunk past the end")?;
        match kind {
            CHUNK_JSON if json_chunk.is_none() => json_chunk = Some(body),
            CHUNK_BIN if bin_chunk.is_none() => bin_chunk = Some(body),
            _ => {}
        }
        at += 8 + len;
    }
    let doc =
        serde_json::from_slice(json_chunk.ok_or("GLB without a JSON chunk")?).map_err(|e| format!("JSON: {e}"))?;
    Ok((doc, bin_chunk))
}

/// Every buffer's bytes, in `buffers[]` order.
fn read_buffers(doc: &Value, bin: Option<&[u8]>, dir: &Path) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    for (i, b) in doc["buffers"].as_array().map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
        let bytes = match b["uri"].as_str() {
            None => bin.ok_or_else(|| format!("buffer {i} has no uri and there is no GLB chunk"))?.to_vec(),
            Some(uri) if uri.starts_with("data:") => {
                let payload = uri.split_once(";base64,").ok_or_else(|| format!("buffer {i}: not base64"))?.1;
                base64_decode(payload).ok_or_else(|| format!("buffer {i}: bad base64"))?
            }
            Some(uri) => std::fs::read(dir.join(uri)).map_err(|e| format!("buffer {i} ({uri}): {e}"))?,
        };
        out.push(bytes);
    }
    Ok(out)
}

/// Packs the buffer views accessors use into one buffer (each at a multiple of 4 bytes),
/// rewriting `bufferViews` and the accessors' references. Returns the packed bytes.
fn pack(doc: &mut Value, buffers: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    let views = doc["bufferViews"].as_array().cloned().unwrap_or_default();
    let mut new_index: Vec<Option<usize>> = vec![None; views.len()];
    let mut new_views = Vec::new();
    let mut packed = Vec::new();
    let accessors = match doc.get_mut("accessors").and_then(Value::as_array_mut) {
        Some(a) => a,
        None => return Ok(packed),
    };
    for acc in accessors.iter_mut() {
        let mut refs: Vec<&mut Value> = Vec::new();
        let (plain, sparse) = split_accessor(acc);
        refs.extend(plain);
        refs.extend(sparse);
        for r in refs {
            let Some(old) = r.as_u64().map(|v| v as usize) else { continue };
            let view = views.get(old).ok_or_else(|| format!("buffer view {old} does not exist"))?;
            if new_index[old].is_none() {
                let buffer = view["buffer"].as_u64().unwrap_or(0) as usize;
                let offset = view["byteOffset"].as_u64().unwrap_or(0) as usize;
                let len = view["byteLength"].as_u64().unwrap_or(0) as usize;
                let src = buffers
                    .get(buffer)
                    .and_then(|b| b.get(offset..offset + len))
                    .ok_or_else(|| format!("buffer view {old} is outside its buffer"))?;
                packed.resize(packed.len().next_multiple_of(4), 0);
                let mut v = view.as_object().cloned().unwrap_or_default();
                v.insert("buffer".into(), json!(0));
                v.insert("byteOffset".into(), json!(packed.len()));
                packed.extend_from_slice(src);
                new_index[old] = Some(new_views.len());
                new_views.push(Value::Object(v));
            }
            *r = json!(new_index[old]);
        }
    }
    doc["bufferViews"] = Value::Array(new_views);
    packed.resize(packed.len().next_multiple_of(4), 0);
    Ok(packed)
}

/// The `bufferView` references of one accessor: its own, and its sparse indices' and
/// values'.
fn split_accessor(acc: &mut Value) -> (Option<&mut Value>, Vec<&mut Value>) {
    let Some(o) = acc.as_object_mut() else { return (None, Vec::new()) };
    let mut sparse_refs = Vec::new();
    let mut plain = None;
    for (k, v) in o.iter_mut() {
        match k.as_str() {
            "bufferView" => plain = Some(v),
            "sparse" => {
                if let Some(s) = v.as_object_mut() {
                    for (part, body) in s.iter_mut() {
                        if (part == "indices" || part == "values")
                            && let Some(r) = body.get_mut("bufferView")
                        {
                            sparse_refs.push(r);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    (plain, sparse_refs)
}

/// Removes what the importer never reads (see the module docs).
fn strip_unread(doc: &mut Value) {
    let Some(o) = doc.as_object_mut() else { return };
    for image in o.get_mut("images").and_then(Value::as_array_mut).map(Vec::as_mut_slice).unwrap_or_default() {
        *image = json!({ "uri": format!("data:image/png;base64,{TINY_PNG}") });
    }
}

/// A 2 × 2 RGBA PNG (red, green / blue, half-transparent white), base64: what every image
/// of a seed becomes.
const TINY_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAE0lEQVR4nGP4z8DwHwyBNAg0AABJSQl4KKDbdwAAAABJRU5ErkJggg==";

/// A GLB file of `json` and `bin` (no binary chunk when `bin` is empty).
fn glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let json_len = json.len().next_multiple_of(4);
    let bin_len = bin.len().next_multiple_of(4);
    let total = 12 + 8 + json_len + if bin.is_empty() { 0 } else { 8 + bin_len };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(GLB_MAGIC);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_len as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(json);
    out.resize(20 + json_len, b' ');
    if !bin.is_empty() {
        out.extend_from_slice(&(bin_len as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
        out.resize(total, 0);
    }
    out
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648 §4).
fn base64_encode(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                s.push(ALPHABET[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Decodes standard base64 (padding optional); `None` on any other character.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_and_matches_rfc4648_vectors() {
        for (plain, coded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE=")]
        {
            assert_eq!(base64_encode(plain.as_bytes()), coded);
            assert_eq!(base64_decode(coded).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn images_become_the_tiny_png_and_materials_stay() {
        let mut doc = json!({"images": [{"bufferView": 3, "mimeType": "image/jpeg"}], "materials": [{}]});
        strip_unread(&mut doc);
        assert_eq!(doc["materials"], json!([{}]));
        let uri = doc["images"][0]["uri"].as_str().unwrap();
        let png = base64_decode(uri.strip_prefix("data:image/png;base64,").unwrap()).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() < 100);
    }
}
