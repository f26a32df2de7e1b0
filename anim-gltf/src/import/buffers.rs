//! Buffers (the GLB binary chunk, base64 `data:` URIs, external files) and accessors:
//! checking that every byte an accessor reads lies in its buffer, and reading the accessor
//! types the `gltf` crate's typed readers do not cover.

use crate::error::GltfError;
use crate::options::LoadOptions;
use gltf::accessor::{DataType, Dimensions};
use std::cell::Cell;
use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::{Component, Path, PathBuf};

/// The most elements one accessor may have (2²⁶, about 67 million). Without a bufferView
/// nothing else bounds an accessor's count, and a tiny file could otherwise ask for tens
/// of gigabytes.
pub const MAX_ACCESSOR_COUNT: usize = 1 << 26;

// ---------------------------------------------------------------------------------------------
// Budget

/// The document's buffers, with the memory budget that every buffer and every decoded
/// accessor is charged to before it is allocated. Dereferences to the buffer data.
pub(super) struct Buffers {
    data: Vec<Vec<u8>>,
    used: Cell<u64>,
    budget: u64,
}

impl Deref for Buffers {
    type Target = [Vec<u8>];
    fn deref(&self) -> &[Vec<u8>] {
        &self.data
    }
}

impl Buffers {
    /// Charges `bytes` (a count times an element size, multiplied with checked arithmetic
    /// by the caller or here) to the budget, or fails naming `path`.
    pub(super) fn charge(&self, path: &str, count: u64, elem: u64) -> Result<(), GltfError> {
        charge(&self.used, self.budget, path, count, elem)
    }

    /// Bytes of the budget not charged yet.
    pub(super) fn remaining(&self) -> u64 {
        self.budget.saturating_sub(self.used.get())
    }
}

fn charge(used: &Cell<u64>, budget: u64, path: &str, count: u64, elem: u64) -> Result<(), GltfError> {
    let needed = count.saturating_mul(elem);
    match used.get().checked_add(needed).filter(|&t| t <= budget) {
        Some(total) => {
            used.set(total);
            Ok(())
        }
        None => Err(GltfError::Budget { path: path.into(), needed, used: used.get(), budget }),
    }
}

// ---------------------------------------------------------------------------------------------
// Buffers

/// Reads the document file itself: a regular file, at most `budget` bytes.
pub(crate) fn read_document(path: &Path, budget: usize) -> Result<Vec<u8>, GltfError> {
    let io = |source| GltfError::Io { file: path.to_owned(), source };
    let (file, len) = open_regular(path).map_err(io)?;
    if len > budget as u64 {
        return Err(GltfError::Budget {
            path: path.display().to_string(),
            needed: len,
            used: 0,
            budget: budget as u64,
        });
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Opens `path` for reading if it is a regular file, and gives its length. The path is
/// checked before opening (opening a FIFO would block), opened non-blocking on Unix, and
/// the opened handle checked again (the path may have been replaced in between).
pub(super) fn open_regular(path: &Path) -> std::io::Result<(File, u64)> {
    let not_regular = || std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file");
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    // Non-blocking: if the path became a FIFO after the check, the open returns at once and
    // the handle check below refuses it. Reads of a regular file ignore the flag.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK);
    let file = open.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    Ok((file, meta.len()))
}

/// Loads every buffer of the document: the GLB binary chunk, a `data:` URI or a file
/// inside the document's folder (or an allowed root), each at least as long as its
/// `byteLength`, every one charged to the memory budget before it is read.
pub(super) fn load_buffers(
    doc: &gltf::Document,
    blob: Option<Vec<u8>>,
    base: Option<&Path>,
    options: &LoadOptions,
) -> Result<Buffers, GltfError> {
    let used = Cell::new(0u64);
    let budget = options.memory_budget as u64;
    let mut blob = blob;
    let mut out = Vec::new();
    for buffer in doc.buffers() {
        let path = format!("buffers[{}]", buffer.index());
        let length = buffer.length();
        charge(&used, budget, &path, length as u64, 1)?;
        let data = match buffer.source() {
            gltf::buffer::Source::Bin => blob.take().ok_or_else(|| GltfError::Buffer {
                path: path.clone(),
                message: "refers to the GLB binary chunk, which is missing".into(),
            })?,
            gltf::buffer::Source::Uri(uri) => read_uri(uri, base, options, length, &path)?,
        };
        if data.len() < length {
            return Err(GltfError::Buffer {
                path,
                message: format!("byteLength is {length} but only {} bytes are available", data.len()),
            });
        }
        out.push(data);
    }
    Ok(Buffers { data: out, used, budget })
}

fn read_uri(
    uri: &str,
    base: Option<&Path>,
    options: &LoadOptions,
    length: usize,
    path: &str,
) -> Result<Vec<u8>, GltfError> {
    let fail = |message: String| GltfError::Buffer { path: path.into(), message };
    if let Some(rest) = uri.strip_prefix("data:") {
        let comma = rest.find(',').ok_or_else(|| fail("malformed data URI (no comma)".into()))?;
        let (meta, payload) = (&rest[..comma], &rest[comma + 1..]);
        if !meta.ends_with(";base64") {
            return Err(fail("data URI is not base64-encoded (only base64 data URIs are supported)".into()));
        }
        return decode_base64(payload).map_err(|m| fail(format!("bad base64 in data URI: {m}")));
    }
    let file = resolve_uri(uri, base, options).map_err(|m| fail(format!("URI {uri:?}: {m}")))?;
    let (handle, len) = open_regular(&file).map_err(|e| fail(format!("cannot read URI {uri:?}: {e}")))?;
    if len < length as u64 {
        return Err(fail(format!("byteLength is {length} but file {uri:?} has only {len} bytes")));
    }
    let mut data = Vec::with_capacity(length);
    handle.take(length as u64).read_to_end(&mut data).map_err(|e| fail(format!("cannot read URI {uri:?}: {e}")))?;
    Ok(data)
}

/// The file a relative URI names: percent-decoded, neither absolute nor with a scheme,
/// and (after `..` and symbolic links are resolved) inside `base` or an allowed root.
pub(super) fn resolve_uri(uri: &str, base: Option<&Path>, options: &LoadOptions) -> Result<PathBuf, String> {
    let decoded = percent_decode(uri).ok_or("is not valid UTF-8 after percent-decoding")?;
    if decoded.contains('\0') {
        return Err("contains a NUL character".into());
    }
    if let Some(colon) = decoded.find(':')
        && !decoded[..colon].contains('/')
    {
        return Err("has a URI scheme or drive letter; only relative paths and data: URIs are read".into());
    }
    let rel = Path::new(&decoded);
    if decoded.starts_with('/') || decoded.starts_with('\\') || rel.is_absolute() || rel.has_root() {
        return Err("is an absolute path; only paths relative to the document are read".into());
    }
    // Lexically, `..` may not climb above the document's folder, unless the caller allows
    // other roots (then only the resolved path below decides).
    let mut depth = 0usize;
    for c in rel.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None if options.allowed_roots.is_empty() => return Err("leads outside the document's folder".into()),
                None => {}
            },
            Component::RootDir | Component::Prefix(_) => return Err("is an absolute path".into()),
        }
    }
    let base =
        base.ok_or("refers to an external file, but the document was loaded from bytes without a base folder")?;
    let file = std::fs::canonicalize(base.join(rel)).map_err(|e| format!("cannot be opened: {e}"))?;
    let mut roots = vec![base.to_owned()];
    roots.extend(options.allowed_roots.iter().cloned());
    let inside = roots.iter().filter_map(|r| std::fs::canonicalize(r).ok()).any(|r| file.starts_with(r));
    if !inside {
        return Err("resolves (through a symbolic link) outside the document's folder and the allowed roots".into());
    }
    Ok(file)
}

/// Percent-decoding (RFC 3986); `None` when the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
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
    String::from_utf8(out).ok()
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
pub(super) fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
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
    buffers: &Buffers,
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
    // Decoded, every component becomes at most 4 bytes (f32/u32); charged per use, before
    // the reader allocates.
    let decoded = (elem as u64).max(4 * acc.dimensions().multiplicity() as u64);
    buffers.charge(&format!("{path} (used as {user})"), count as u64, decoded)?;
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
