//! Buffers (the GLB binary chunk, base64 `data:` URIs, external files) and accessors:
//! checking that every byte an accessor reads lies in its buffer, and reading the accessor
//! types the `gltf` crate's typed readers do not cover.

use super::MAX_ACCESSOR_COUNT;
use crate::GltfError;
use gltf::accessor::{DataType, Dimensions};
use std::path::Path;

// ---------------------------------------------------------------------------------------------
// Buffers

/// Loads every buffer of the document: the GLB binary chunk, a `data:` URI or a file
/// next to the document, each at least as long as its `byteLength`.
pub(super) fn load_buffers(
    doc: &gltf::Document,
    blob: Option<Vec<u8>>,
    base: Option<&Path>,
) -> Result<Vec<Vec<u8>>, GltfError> {
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
fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
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
pub(super) struct Want {
    /// Allowed dimensions.
    pub(super) dims: &'static [Dimensions],
    /// Allowed (component type, must be normalized) pairs.
    pub(super) types: &'static [(DataType, bool)],
    /// How the type is named in error messages.
    pub(super) what: &'static str,
}

/// A plain `FLOAT` component.
pub(super) const F32: (DataType, bool) = (DataType::F32, false);

/// Checks type, count ≥ 1 and that every byte the accessor (and its sparse part) reads
/// lies in its buffer view and the view in its buffer, so the `gltf` readers cannot fail.
pub(super) fn check_accessor(
    acc: &gltf::Accessor,
    buffers: &[Vec<u8>],
    want: &Want,
    user: &str,
) -> Result<(), GltfError> {
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

/// A [`GltfError::NonFinite`] naming the first item with a NaN or infinite component.
pub(super) fn check_finite<const N: usize>(items: &[[f32; N]], path: &str, what: &str) -> Result<(), GltfError> {
    if let Some(i) = items.iter().position(|v| v.iter().any(|x| !x.is_finite())) {
        return Err(GltfError::NonFinite { path: path.into(), what: format!("{what} {i}") });
    }
    Ok(())
}

/// Reads an accessor of any component type as floats, applying glTF's normalization for
/// `normalized` integers (`c / 255`, `max(c / 127, -1)`, …) and sparse substitution. Used
/// for the integer attribute types of `KHR_mesh_quantization` (and texture coordinates),
/// which the `gltf` crate's typed readers do not cover. The accessor must have passed
/// [`check_accessor`].
pub(super) fn quantized<const N: usize>(acc: &gltf::Accessor, buffers: &[Vec<u8>]) -> Vec<[f32; N]> {
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
