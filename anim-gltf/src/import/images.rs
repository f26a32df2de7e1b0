//! Images: their bytes read from a GLB buffer view, a base64 `data:` URI or a file inside
//! the document's folder (resolved and opened exactly as external buffers are), then decoded
//! into RGBA8: PNG with the `png` crate, JPEG with `zune-jpeg`, told apart by their magic
//! bytes (a `mimeType` that disagrees is not trusted).
//!
//! Decoding is bounded: the header is read first, the dimensions are checked (neither 0
//! nor above [`MAX_IMAGE_DIMENSION`]) and the decoder's output plus the RGBA8 image are
//! charged to the memory budget before anything is allocated for them; the decoders are
//! also given the limits (`png::Limits`, `zune-jpeg`'s maximum width and height). So a
//! small file declaring a huge image (a decompression bomb) fails with
//! [`GltfError::Budget`] naming `/images/N`, and a corrupt, truncated or foreign image with
//! [`GltfError::Image`].

use super::Importer;
use super::buffers::{decode_base64, open_regular, resolve_uri};
use crate::error::GltfError;
use crate::material::Image;
use std::borrow::Cow;
use std::io::Read;

/// The largest width or height an image may have (16,384: what most GPUs sample).
pub const MAX_IMAGE_DIMENSION: u32 = 16384;

impl Importer<'_> {
    /// Decodes every image that `needed` marks (the images some texture uses); the others
    /// stay empty (0 × 0).
    pub(super) fn images(&mut self, needed: &[bool]) -> Result<Vec<Image>, GltfError> {
        let mut out = Vec::with_capacity(self.doc.images().len());
        for image in self.doc.images() {
            let i = image.index();
            let name = image.name().unwrap_or("").to_owned();
            if !needed.get(i).copied().unwrap_or(false) {
                out.push(Image { name, width: 0, height: 0, pixels: Vec::new() });
                continue;
            }
            let path = format!("images[{i}]");
            let bytes = self.image_bytes(&image, &path)?;
            let (width, height, pixels) = self.decode(&bytes, &path)?;
            out.push(Image { name, width, height, pixels });
        }
        Ok(out)
    }

    /// The encoded bytes of `image`.
    fn image_bytes(&self, image: &gltf::Image<'_>, path: &str) -> Result<Cow<'_, [u8]>, GltfError> {
        let fail = |message: String| GltfError::Image { path: path.into(), message };
        match image.source() {
            gltf::image::Source::View { view, .. } => {
                let buf = view.buffer().index();
                let data = self.buffers.get(buf).map_or(&[][..], Vec::as_slice);
                let end = view.offset().checked_add(view.length()).filter(|&e| e <= data.len());
                let end = end.ok_or_else(|| {
                    fail(format!("bufferViews[{}] lies outside buffers[{buf}] ({} bytes)", view.index(), data.len()))
                })?;
                Ok(Cow::Borrowed(&data[view.offset()..end]))
            }
            gltf::image::Source::Uri { uri, .. } => {
                if let Some(rest) = uri.strip_prefix("data:") {
                    let comma = rest.find(',').ok_or_else(|| fail("malformed data URI (no comma)".into()))?;
                    let (meta, payload) = (&rest[..comma], &rest[comma + 1..]);
                    if !meta.ends_with(";base64") {
                        return Err(fail("data URI is not base64-encoded".into()));
                    }
                    self.buffers.charge(path, payload.len() as u64 / 4 * 3 + 3, 1)?;
                    return decode_base64(payload).map(Cow::Owned).map_err(|m| fail(format!("bad base64: {m}")));
                }
                let file = resolve_uri(uri, self.base, self.options).map_err(|m| fail(format!("URI {uri:?}: {m}")))?;
                let (handle, len) = open_regular(&file).map_err(|e| fail(format!("cannot read URI {uri:?}: {e}")))?;
                self.buffers.charge(path, len, 1)?;
                let mut data = Vec::with_capacity(len as usize);
                handle.take(len).read_to_end(&mut data).map_err(|e| fail(format!("cannot read URI {uri:?}: {e}")))?;
                Ok(Cow::Owned(data))
            }
        }
    }

    /// Decodes PNG or JPEG `bytes` into RGBA8 within the budget.
    fn decode(&self, bytes: &[u8], path: &str) -> Result<(u32, u32, Vec<u8>), GltfError> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            self.decode_png(bytes, path)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            self.decode_jpeg(bytes, path)
        } else {
            Err(GltfError::Image {
                path: path.into(),
                message: "neither PNG nor JPEG data (unsupported format)".into(),
            })
        }
    }

    fn decode_png(&self, bytes: &[u8], path: &str) -> Result<(u32, u32, Vec<u8>), GltfError> {
        let fail = |e: png::DecodingError| GltfError::Image { path: path.into(), message: format!("PNG: {e}") };
        // The decoder's own buffers (rows, palette, text chunks) within what is left.
        let limits = png::Limits { bytes: usize::try_from(self.buffers.remaining()).unwrap_or(usize::MAX) };
        let mut decoder = png::Decoder::new_with_limits(std::io::Cursor::new(bytes), limits);
        decoder.set_transformations(png::Transformations::normalize_to_color8());
        let mut reader = decoder.read_info().map_err(fail)?;
        let (w, h) = reader.info().size();
        check_size(w, h, path)?;
        let size = reader.output_buffer_size().ok_or_else(|| GltfError::Image {
            path: path.into(),
            message: format!("a {w} × {h} image does not fit in memory"),
        })?;
        self.buffers.charge(path, size as u64 + u64::from(w) * u64::from(h) * 4, 1)?;
        let mut buf = vec![0u8; size];
        let frame = reader.next_frame(&mut buf).map_err(fail)?;
        let texels = (w as usize) * (h as usize);
        let pixels = match (frame.color_type, frame.bit_depth) {
            (png::ColorType::Rgba, png::BitDepth::Eight) => {
                buf.truncate(texels * 4);
                buf
            }
            (png::ColorType::Rgb, png::BitDepth::Eight) => expand(&buf[..texels * 3], 3),
            (png::ColorType::GrayscaleAlpha, png::BitDepth::Eight) => expand(&buf[..texels * 2], 2),
            (png::ColorType::Grayscale, png::BitDepth::Eight) => expand(&buf[..texels], 1),
            (c, d) => {
                return Err(GltfError::Image {
                    path: path.into(),
                    message: format!("PNG: decoded to {c:?} at {d:?} bits, not 8-bit"),
                });
            }
        };
        Ok((w, h, pixels))
    }

    fn decode_jpeg(&self, bytes: &[u8], path: &str) -> Result<(u32, u32, Vec<u8>), GltfError> {
        use zune_jpeg::zune_core::bytestream::ZCursor;
        use zune_jpeg::zune_core::colorspace::ColorSpace;
        use zune_jpeg::zune_core::options::DecoderOptions;
        let fail =
            |e: zune_jpeg::errors::DecodeErrors| GltfError::Image { path: path.into(), message: format!("JPEG: {e}") };
        let max = MAX_IMAGE_DIMENSION as usize;
        let options = DecoderOptions::default()
            .set_max_width(max)
            .set_max_height(max)
            .jpeg_set_out_colorspace(ColorSpace::RGBA)
            .set_strict_mode(true);
        let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options);
        decoder.decode_headers().map_err(fail)?;
        let (w, h) = decoder
            .dimensions()
            .ok_or_else(|| GltfError::Image { path: path.into(), message: "JPEG: no frame header".into() })?;
        let (w, h) = (u32::try_from(w).unwrap_or(u32::MAX), u32::try_from(h).unwrap_or(u32::MAX));
        check_size(w, h, path)?;
        let size = decoder.output_buffer_size().ok_or_else(|| GltfError::Image {
            path: path.into(),
            message: format!("a {w} × {h} image does not fit in memory"),
        })?;
        // The output, and the decoder's component planes (up to four bytes a texel).
        self.buffers.charge(path, size as u64 + u64::from(w) * u64::from(h) * 4, 1)?;
        let mut buf = vec![0u8; size];
        decoder.decode_into(&mut buf).map_err(fail)?;
        let texels = (w as usize) * (h as usize);
        let components = size.checked_div(texels).unwrap_or(0);
        let pixels = match components {
            4 => buf,
            3 => expand(&buf[..texels * 3], 3),
            1 => expand(&buf[..texels], 1),
            c => {
                return Err(GltfError::Image { path: path.into(), message: format!("JPEG: {c} components a texel") });
            }
        };
        Ok((w, h, pixels))
    }
}

/// Refuses an empty image or one beyond [`MAX_IMAGE_DIMENSION`].
fn check_size(w: u32, h: u32, path: &str) -> Result<(), GltfError> {
    if w == 0 || h == 0 {
        return Err(GltfError::Image { path: path.into(), message: format!("the image is empty ({w} × {h})") });
    }
    if w > MAX_IMAGE_DIMENSION || h > MAX_IMAGE_DIMENSION {
        return Err(GltfError::Unsupported {
            path: path.into(),
            message: format!("a {w} × {h} image; at most {MAX_IMAGE_DIMENSION} texels a side are supported"),
        });
    }
    Ok(())
}

/// 8-bit grey, grey + alpha or RGB texels as RGBA8.
fn expand(src: &[u8], channels: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() / channels * 4);
    for t in src.chunks_exact(channels) {
        match channels {
            1 => out.extend_from_slice(&[t[0], t[0], t[0], 255]),
            2 => out.extend_from_slice(&[t[0], t[0], t[0], t[1]]),
            _ => out.extend_from_slice(&[t[0], t[1], t[2], 255]),
        }
    }
    out
}
