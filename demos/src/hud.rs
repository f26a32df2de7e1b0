//! Text and diagrams drawn over the scene: overlay lines on a plane just in front of the
//! camera, addressed in pixels from the top-left corner. The font is a stroke font of
//! upper-case letters, digits and a little punctuation on a 4 × 6 grid (lower case is
//! drawn upper case); anything else is a space.

use anim_math::Vec3;
use anim_render_vk::{Camera, FrameData};

/// Polylines of a glyph on a 4 × 6 grid (y up): points as digit pairs `xy`, polylines
/// separated by `|`.
fn glyph(c: char) -> &'static str {
    match c.to_ascii_uppercase() {
        'A' => "0004264440|0343",
        'B' => "00063645443303|3342413000",
        'C' => "4536160501103041",
        'D' => "00063645413000",
        'E' => "46060040|0333",
        'F' => "460600|0333",
        'G' => "45361605011030414323",
        'H' => "0006|4640|0343",
        'I' => "1636|2620|1030",
        'J' => "4641301001",
        'K' => "0006|4602|1340",
        'L' => "060040",
        'M' => "0006234640",
        'N' => "00064046",
        'O' => "010516364541301001",
        'P' => "00063645443303",
        'Q' => "010516364541301001|2240",
        'R' => "00063645443303|2340",
        'S' => "453616050413334241301001",
        'T' => "0646|2620",
        'U' => "060110304146",
        'V' => "062046",
        'W' => "0610233046",
        'X' => "0046|0640",
        'Y' => "062346|2320",
        'Z' => "06460040",
        '0' => "010516364541301001|0145",
        '1' => "152620|1030",
        '2' => "05163645440040",
        '3' => "0516364544334241301001|1333",
        '4' => "30360242",
        '5' => "460603334241301001",
        '6' => "4536160501103041423303",
        '7' => "064610",
        '8' => "13040516364544331302011030414233",
        '9' => "0110304145361605041343",
        '.' => "2021",
        ',' => "2110",
        ':' => "2122|2425",
        '-' => "1333",
        '+' => "0343|2125",
        '/' => "0046",
        '%' => "0046|0515|3141",
        '(' => "36252130",
        ')' => "16252110",
        '>' => "054301",
        '<' => "450341",
        '=' => "0242|0444",
        '_' => "0040",
        '|' => "2026",
        '\'' => "2526",
        '[' => "36262030",
        ']' => "16262010",
        _ => "",
    }
}

/// A pixel-addressed drawing plane in front of `camera`, for a `width × height` image.
#[derive(Clone, Copy, Debug)]
pub struct Screen {
    origin: Vec3,
    right: Vec3,
    down: Vec3,
}

impl Screen {
    /// The plane at 1.5 × the near distance, mapped so that a point at pixel `(x, y)`
    /// projects to that pixel.
    pub fn new(camera: &Camera, width: u32, height: u32) -> Self {
        let forward = (camera.target - camera.eye).normalize();
        let right = forward.cross(&camera.up).normalize();
        let up = right.cross(&forward);
        let d = camera.near * 1.5;
        let half_h = d * (camera.fov_y * 0.5).tan();
        let half_w = half_h * width as f32 / height.max(1) as f32;
        let centre = camera.eye + forward * d;
        Self {
            origin: centre - right * half_w + up * half_h,
            right: right * (2.0 * half_w / width.max(1) as f32),
            down: -up * (2.0 * half_h / height.max(1) as f32),
        }
    }

    /// The world point at pixel `(x, y)`.
    pub fn at(&self, x: f32, y: f32) -> Vec3 {
        self.origin + self.right * x + self.down * y
    }

    /// A line between two pixels.
    pub fn line(&self, frame: &mut FrameData, a: [f32; 2], b: [f32; 2], color: [f32; 4]) {
        frame.overlay_line(self.at(a[0], a[1]), self.at(b[0], b[1]), color);
    }

    /// `text` with its top-left corner at pixel `(x, y)`, `size` pixels from line to line.
    /// Returns the x after the last character.
    pub fn text(&self, frame: &mut FrameData, x: f32, y: f32, size: f32, text: &str, color: [f32; 4]) -> f32 {
        let s = size / 8.0;
        let mut cx = x;
        for c in text.chars() {
            for stroke in glyph(c).split('|') {
                let pts: Vec<[f32; 2]> = stroke
                    .as_bytes()
                    .chunks_exact(2)
                    .map(|p| [cx + f32::from(p[0] - b'0') * s, y + (6.0 - f32::from(p[1] - b'0')) * s + s])
                    .collect();
                for w in pts.windows(2) {
                    self.line(frame, w[0], w[1], color);
                }
            }
            cx += 5.5 * s;
        }
        cx
    }

    /// A rectangle's outline.
    pub fn rect(&self, frame: &mut FrameData, x: f32, y: f32, w: f32, h: f32, color: [f32; 4]) {
        let c = [[x, y], [x + w, y], [x + w, y + h], [x, y + h]];
        for i in 0..4 {
            self.line(frame, c[i], c[(i + 1) % 4], color);
        }
    }

    /// A filled bar (horizontal strokes one pixel apart).
    pub fn bar(&self, frame: &mut FrameData, x: f32, y: f32, w: f32, h: f32, color: [f32; 4]) {
        let mut k = 0.0;
        while k <= h {
            self.line(frame, [x, y + k], [x + w, y + k], color);
            k += 1.0;
        }
    }

    /// A circle's outline of radius `r` pixels.
    pub fn circle(&self, frame: &mut FrameData, cx: f32, cy: f32, r: f32, color: [f32; 4]) {
        let n = 16;
        let p = |i: usize| {
            let a = i as f32 / n as f32 * std::f32::consts::TAU;
            [cx + r * a.cos(), cy + r * a.sin()]
        };
        for i in 0..n {
            self.line(frame, p(i), p(i + 1), color);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_glyph_stays_on_its_grid() {
        for c in (' '..='~').chain(['_']) {
            for stroke in glyph(c).split('|').filter(|s| !s.is_empty()) {
                assert!(stroke.len() % 2 == 0 && stroke.len() >= 4, "{c:?}: {stroke}");
                for p in stroke.as_bytes().chunks_exact(2) {
                    assert!((b'0'..=b'4').contains(&p[0]) && (b'0'..=b'6').contains(&p[1]), "{c:?}: {stroke}");
                }
            }
        }
    }

    #[test]
    fn pixels_project_back_to_themselves() {
        let camera = Camera { eye: Vec3::new(1.0, 2.0, 5.0), target: Vec3::new(0.0, 1.0, 0.0), ..Camera::default() };
        let (w, h) = (960, 540);
        let s = Screen::new(&camera, w, h);
        for (x, y) in [(0.0, 0.0), (100.0, 30.0), (480.0, 270.0), (900.0, 500.0)] {
            let p = camera.project(&s.at(x, y), w, h).unwrap();
            assert!((p[0] - x).abs() < 0.05 && (p[1] - y).abs() < 0.05, "({x}, {y}) → {p:?}");
        }
    }
}
