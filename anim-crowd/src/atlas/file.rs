//! The atlas file format.
//!
//! [`AnimAtlas::write_to`] and [`AnimAtlas::read_from`] (and [`AnimAtlas::save`] /
//! [`AnimAtlas::load`]) use one little-endian binary layout, no padding. `u32` and `f32`
//! are 4 bytes, `u8` 1, a *string* is a `u32` byte length (at most [`MAX_NAME_BYTES`])
//! followed by that many bytes of UTF-8.
//!
//! | Field | Type | Meaning |
//! |---|---|---|
//! | magic | 8 bytes | `ANIMATLS` ([`FILE_MAGIC`]) |
//! | version | `u32` | `1` ([`FILE_VERSION`]) |
//! | layout | `u32` | `0` model-trs, `1` matrix, `2` dq |
//! | format | `u32` | `0` f32, `1` f16 |
//! | joint count `J` | `u32` | skin joints, at most [`MAX_FILE_JOINTS`]; `J · texels_per_joint` ≤ [`MAX_HEIGHT`] |
//! | width `W` | `u32` | columns, `2 ..= 16384` |
//! | rigid | `u8` | `0` or `1` (must be `1` for the dq layout) |
//! | clip count `C` | `u32` | `1 ..= W / 2` |
//! | `C` clips | | each: name (string), first frame `u32`, frame count `u32` (≥ 2, `first + count ≤ W`), rate `f32` (> 0), duration `f32` (≥ 0), looping `u8` (`0`/`1`), bounds min `x y z`, max `x y z` (6 × `f32`) |
//! | `J` joint names | strings | skin order |
//! | `J` inverse binds | 16 × `f32` each | column-major |
//! | texels | `W · J · texels_per_joint` texels | image order (row `y`, then column `x`), 4 channels each: `f32`, or `f16` bit patterns as `u16` |
//!
//! The file ends after the last texel. Every float must be finite. The reader checks
//! every field as it goes, reads strings and texels in bounded chunks (it never reserves
//! memory for data the stream has not delivered), and reports the first fault as a typed
//! [`AtlasError`] naming the field; it never panics.

use super::error::AtlasError;
use super::limits::{FILE_VERSION, MAX_HEIGHT, MAX_NAME_BYTES, MAX_WIDTH};
use super::types::{AnimAtlas, AtlasClip, TexelFormat, Texels, TextureLayout};
use anim_math::{Mat4, Vec3};
use std::fmt;
use std::io::{Read, Write};
use std::path::Path;

/// Magic bytes opening an atlas file.
pub const FILE_MAGIC: [u8; 8] = *b"ANIMATLS";

/// Most skin joints an atlas file may declare.
pub const MAX_FILE_JOINTS: u32 = 65536;

/// Texels converted or read at a time when streaming the image.
const CHUNK_TEXELS: usize = 4096;

/// Little-endian writer helpers.
struct Out<'a, W: Write> {
    w: &'a mut W,
}

impl<W: Write> Out<'_, W> {
    fn bytes(&mut self, b: &[u8]) -> Result<(), AtlasError> {
        Ok(self.w.write_all(b)?)
    }
    fn u32(&mut self, v: u32) -> Result<(), AtlasError> {
        self.bytes(&v.to_le_bytes())
    }
    fn u8(&mut self, v: u8) -> Result<(), AtlasError> {
        self.bytes(&[v])
    }
    fn f32(&mut self, v: f32) -> Result<(), AtlasError> {
        self.bytes(&v.to_le_bytes())
    }
    fn str(&mut self, s: &str) -> Result<(), AtlasError> {
        let len = u32::try_from(s.len()).ok().filter(|l| *l <= MAX_NAME_BYTES).ok_or_else(|| {
            AtlasError::NameTooLong { what: format!("name {s:.32?}…"), len: s.len() as u64, max: MAX_NAME_BYTES }
        })?;
        self.u32(len)?;
        self.bytes(s.as_bytes())
    }
}

/// Little-endian reader helpers: every short read is [`AtlasError::Truncated`] naming the
/// field, every float is checked finite.
struct In<'a, R: Read> {
    r: &'a mut R,
}

impl<R: Read> In<'_, R> {
    fn exact(&mut self, buf: &mut [u8], what: &dyn Fn() -> String) -> Result<(), AtlasError> {
        self.r.read_exact(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                AtlasError::Truncated { what: what() }
            } else {
                AtlasError::Io(e)
            }
        })
    }
    fn array<const N: usize>(&mut self, what: &dyn Fn() -> String) -> Result<[u8; N], AtlasError> {
        let mut b = [0u8; N];
        self.exact(&mut b, what)?;
        Ok(b)
    }
    fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32, AtlasError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn flag(&mut self, what: &dyn Fn() -> String) -> Result<bool, AtlasError> {
        match self.array::<1>(what)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(AtlasError::BadField { what: what(), value: v.to_string(), why: "expected 0 or 1" }),
        }
    }
    fn f32(&mut self, what: &dyn Fn() -> String) -> Result<f32, AtlasError> {
        let v = f32::from_le_bytes(self.array(what)?);
        if v.is_finite() { Ok(v) } else { Err(AtlasError::NonFinite { what: what(), value: v }) }
    }
    fn string(&mut self, what: &dyn Fn() -> String) -> Result<String, AtlasError> {
        let len = self.u32(what)?;
        if len > MAX_NAME_BYTES {
            return Err(AtlasError::NameTooLong { what: what(), len: u64::from(len), max: MAX_NAME_BYTES });
        }
        let mut buf = Vec::new();
        // `len` is capped above, and `take` stops at the end of the stream, so this
        // allocates at most what the stream holds (and never more than 64 KiB).
        self.r.by_ref().take(u64::from(len)).read_to_end(&mut buf)?;
        if buf.len() != len as usize {
            return Err(AtlasError::Truncated { what: what() });
        }
        String::from_utf8(buf).map_err(|_| AtlasError::NotUtf8 { what: what() })
    }
    fn vec3(&mut self, what: &dyn Fn() -> String) -> Result<Vec3, AtlasError> {
        Ok(Vec3::new(self.f32(what)?, self.f32(what)?, self.f32(what)?))
    }
    /// True when the stream is at its end.
    fn at_end(&mut self) -> Result<bool, AtlasError> {
        let mut b = [0u8; 1];
        loop {
            match self.r.read(&mut b) {
                Ok(0) => return Ok(true),
                Ok(_) => return Ok(false),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(AtlasError::Io(e)),
            }
        }
    }
}

fn bad(what: &str, value: impl fmt::Display, why: &'static str) -> AtlasError {
    AtlasError::BadField { what: what.to_owned(), value: value.to_string(), why }
}

impl AnimAtlas {
    /// Writes the atlas in the file format of the [module docs](self#file-format).
    ///
    /// # Errors
    /// The writer fails, or a name is longer than [`MAX_NAME_BYTES`].
    pub fn write_to(&self, w: &mut impl Write) -> Result<(), AtlasError> {
        let mut o = Out { w };
        o.bytes(&FILE_MAGIC)?;
        o.u32(FILE_VERSION)?;
        o.u32(self.layout.code())?;
        o.u32(self.format.code())?;
        o.u32(self.joint_names.len() as u32)?;
        o.u32(self.width)?;
        o.u8(u8::from(self.rigid))?;
        o.u32(self.clips.len() as u32)?;
        for c in &self.clips {
            o.str(&c.name)?;
            o.u32(c.first_frame)?;
            o.u32(c.frame_count)?;
            o.f32(c.rate)?;
            o.f32(c.duration)?;
            o.u8(u8::from(c.looping))?;
            for v in c.bounds.0.iter().chain(c.bounds.1.iter()) {
                o.f32(*v)?;
            }
        }
        for n in &self.joint_names {
            o.str(n)?;
        }
        for m in &self.inverse_bind {
            for v in m.as_slice() {
                o.f32(*v)?;
            }
        }
        let mut buf = Vec::with_capacity(CHUNK_TEXELS * self.format.texel_size());
        match &self.texels {
            Texels::F32(t) => {
                for chunk in t.chunks(CHUNK_TEXELS) {
                    buf.clear();
                    chunk.iter().flatten().for_each(|v| buf.extend_from_slice(&v.to_le_bytes()));
                    o.bytes(&buf)?;
                }
            }
            Texels::F16(t) => {
                for chunk in t.chunks(CHUNK_TEXELS) {
                    buf.clear();
                    chunk.iter().flatten().for_each(|v| buf.extend_from_slice(&v.to_le_bytes()));
                    o.bytes(&buf)?;
                }
            }
        }
        Ok(())
    }

    /// Reads an atlas written by [`AnimAtlas::write_to`], validating every field: safe on
    /// hostile input (it never allocates more than the bytes the stream actually holds
    /// justify, and never panics). The stream must end after the texels.
    ///
    /// # Errors
    /// [`AtlasError::BadMagic`], [`AtlasError::UnsupportedVersion`],
    /// [`AtlasError::Truncated`], [`AtlasError::BadField`], [`AtlasError::NameTooLong`],
    /// [`AtlasError::NotUtf8`], [`AtlasError::NonFinite`], [`AtlasError::ClipRange`],
    /// [`AtlasError::TrailingBytes`], or [`AtlasError::Io`].
    pub fn read_from(r: &mut impl Read) -> Result<Self, AtlasError> {
        let mut i = In { r };
        let s = |w: &'static str| move || w.to_owned();
        let magic: [u8; 8] = i.array(&s("magic"))?;
        if magic != FILE_MAGIC {
            return Err(AtlasError::BadMagic(magic));
        }
        let version = i.u32(&s("version"))?;
        if version != FILE_VERSION {
            return Err(AtlasError::UnsupportedVersion(version));
        }
        let code = i.u32(&s("layout"))?;
        let layout = TextureLayout::from_code(code).ok_or_else(|| bad("layout", code, "expected 0, 1 or 2"))?;
        let code = i.u32(&s("format"))?;
        let format = TexelFormat::from_code(code).ok_or_else(|| bad("format", code, "expected 0 or 1"))?;
        let joints = i.u32(&s("joint count"))?;
        if joints > MAX_FILE_JOINTS {
            return Err(bad("joint count", joints, "more than 65536"));
        }
        let height = u64::from(joints) * u64::from(layout.texels_per_joint());
        if height > u64::from(MAX_HEIGHT) {
            return Err(bad("joint count", joints, "too many rows for the layout (more than 16384)"));
        }
        let width = i.u32(&s("width"))?;
        if !(2..=MAX_WIDTH).contains(&width) {
            return Err(bad("width", width, "expected 2 to 16384 columns"));
        }
        let rigid = i.flag(&s("rigid flag"))?;
        if layout == TextureLayout::SkinDualQuat && !rigid {
            return Err(bad("rigid flag", 0, "the dual-quaternion layout is always rigid"));
        }
        let clip_count = i.u32(&s("clip count"))?;
        if clip_count == 0 || clip_count > width / 2 {
            return Err(bad("clip count", clip_count, "expected 1 to width / 2 clips (each has 2 frames or more)"));
        }
        let mut clips = Vec::new();
        for c in 0..clip_count as usize {
            let name = i.string(&|| format!("clip {c} name"))?;
            let f = |field: &'static str| {
                let name = name.clone();
                move || format!("clip {c} ({name:?}) {field}")
            };
            let first_frame = i.u32(&f("first frame"))?;
            let frame_count = i.u32(&f("frame count"))?;
            if frame_count < 2 {
                return Err(bad(&f("frame count")(), frame_count, "expected at least 2"));
            }
            let end = u64::from(first_frame) + u64::from(frame_count);
            if end > u64::from(width) {
                return Err(AtlasError::ClipRange { clip: c, name, first: first_frame, end, width });
            }
            let rate = i.f32(&f("rate"))?;
            if rate <= 0.0 {
                return Err(bad(&f("rate")(), rate, "expected a positive rate"));
            }
            let duration = i.f32(&f("duration"))?;
            if duration < 0.0 {
                return Err(bad(&f("duration")(), duration, "expected a duration of 0 or more"));
            }
            let looping = i.flag(&f("looping flag"))?;
            let lo = i.vec3(&f("bounds"))?;
            let hi = i.vec3(&f("bounds"))?;
            clips.push(AtlasClip { name, first_frame, frame_count, rate, duration, looping, bounds: (lo, hi) });
        }
        let mut joint_names = Vec::new();
        for j in 0..joints {
            joint_names.push(i.string(&|| format!("joint {j} name"))?);
        }
        let mut inverse_bind = Vec::new();
        for j in 0..joints {
            let mut m = [0.0f32; 16];
            for (k, v) in m.iter_mut().enumerate() {
                *v = i.f32(&|| format!("inverse bind matrix {j} element {k}"))?;
            }
            inverse_bind.push(Mat4::from_column_slice(&m));
        }
        // At most 16384 × 16384 texels (checked above); read in chunks so that the image
        // grows only as fast as the stream delivers it.
        let count = width as usize * height as usize;
        let texel_at = |n: usize| {
            let w = width as usize;
            move || format!("texel ({}, {})", n % w, n / w)
        };
        let texels = match format {
            TexelFormat::F32 => {
                let mut v: Vec<[f32; 4]> = Vec::with_capacity(count.min(CHUNK_TEXELS));
                let mut buf = vec![0u8; CHUNK_TEXELS * 16];
                while v.len() < count {
                    let n = (count - v.len()).min(CHUNK_TEXELS);
                    i.exact(&mut buf[..n * 16], &texel_at(v.len()))?;
                    for t in buf[..n * 16].chunks_exact(16) {
                        let mut x = [0.0f32; 4];
                        for (c, b) in x.iter_mut().zip(t.chunks_exact(4)) {
                            *c = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        }
                        if let Some(bad) = x.iter().find(|c| !c.is_finite()) {
                            return Err(AtlasError::NonFinite { what: texel_at(v.len())(), value: *bad });
                        }
                        v.push(x);
                    }
                }
                Texels::F32(v)
            }
            TexelFormat::F16 => {
                let mut v: Vec<[u16; 4]> = Vec::with_capacity(count.min(CHUNK_TEXELS));
                let mut buf = vec![0u8; CHUNK_TEXELS * 8];
                while v.len() < count {
                    let n = (count - v.len()).min(CHUNK_TEXELS);
                    i.exact(&mut buf[..n * 8], &texel_at(v.len()))?;
                    for t in buf[..n * 8].chunks_exact(8) {
                        let mut x = [0u16; 4];
                        for (c, b) in x.iter_mut().zip(t.chunks_exact(2)) {
                            *c = u16::from_le_bytes([b[0], b[1]]);
                        }
                        if let Some(bad) = x.iter().map(|h| half::f16::from_bits(*h)).find(|h| !h.is_finite()) {
                            return Err(AtlasError::NonFinite { what: texel_at(v.len())(), value: bad.to_f32() });
                        }
                        v.push(x);
                    }
                }
                Texels::F16(v)
            }
        };
        if !i.at_end()? {
            return Err(AtlasError::TrailingBytes);
        }
        Ok(Self { layout, format, joint_names, inverse_bind, width, rigid, clips, texels })
    }

    /// Writes the atlas to a file ([`AnimAtlas::write_to`], buffered).
    ///
    /// # Errors
    /// [`AtlasError::File`] naming the path, around the cause.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), AtlasError> {
        let path = path.as_ref();
        let wrap = |e: AtlasError| AtlasError::File { path: path.to_owned(), source: Box::new(e) };
        let file = std::fs::File::create(path).map_err(|e| wrap(e.into()))?;
        let mut w = std::io::BufWriter::new(file);
        self.write_to(&mut w).map_err(wrap)?;
        w.flush().map_err(|e| wrap(e.into()))
    }

    /// Reads an atlas file ([`AnimAtlas::read_from`], buffered).
    ///
    /// # Errors
    /// [`AtlasError::File`] naming the path, around the cause.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, AtlasError> {
        let path = path.as_ref();
        let wrap = |e: AtlasError| AtlasError::File { path: path.to_owned(), source: Box::new(e) };
        let file = std::fs::File::open(path).map_err(|e| wrap(e.into()))?;
        Self::read_from(&mut std::io::BufReader::new(file)).map_err(wrap)
    }
}
