//! MikkTSpace tangents (M. Mikkelsen, *Simulation of Wrinkled Surfaces Revisited*, 2008),
//! what glTF asks for when a normal-mapped primitive has no `TANGENT`: computed by the
//! `bevy_mikktspace` crate from positions, normals (the primitive's, or smooth normals
//! from its triangles) and the normal texture's coordinate set.
//!
//! glTF's texture coordinates run down the image (v = 0 is the top row) while its normal
//! maps have +Y up, so the bitangent `cross(normal, tangent) · w` must point towards
//! *decreasing* v; MikkTSpace's points towards increasing v, so its sign is negated (as
//! three.js does for glTF).

use anim_core::skin::Mesh;
use anim_math::Vec3;

/// The mesh's triangles as MikkTSpace reads them, and the tangents it writes back.
struct Geometry<'a> {
    mesh: &'a Mesh,
    normals: &'a [Vec3],
    uvs: &'a [[f32; 2]],
    tangents: Vec<[f32; 4]>,
}

impl Geometry<'_> {
    fn vertex(&self, face: usize, vert: usize) -> usize {
        self.mesh.indices[face * 3 + vert] as usize
    }
}

impl bevy_mikktspace::Geometry for Geometry<'_> {
    fn num_faces(&self) -> usize {
        self.mesh.indices.len() / 3
    }

    fn num_vertices_of_face(&self, _face: usize) -> usize {
        3
    }

    fn position(&self, face: usize, vert: usize) -> [f32; 3] {
        self.mesh.positions[self.vertex(face, vert)].into()
    }

    fn normal(&self, face: usize, vert: usize) -> [f32; 3] {
        self.normals[self.vertex(face, vert)].into()
    }

    fn tex_coord(&self, face: usize, vert: usize) -> [f32; 2] {
        self.uvs[self.vertex(face, vert)]
    }

    fn set_tangent(&mut self, tangent: Option<bevy_mikktspace::TangentSpace>, face: usize, vert: usize) {
        if let Some(t) = tangent {
            let v = self.vertex(face, vert);
            self.tangents[v] = t.tangent_encoded();
        }
    }
}

/// Unit tangents (w = the bitangent's sign) for every vertex of `mesh`, from texture
/// coordinates `uvs` (one a vertex; indices already checked against the vertex count). A
/// vertex no triangle uses, or whose tangent space is degenerate, gets +X.
pub(super) fn mikktspace(mesh: &Mesh, uvs: &[[f32; 2]]) -> Vec<[f32; 4]> {
    let smooth;
    let normals = if mesh.normals.len() == mesh.positions.len() {
        &mesh.normals
    } else {
        smooth = mesh.smooth_normals();
        &smooth
    };
    let mut g = Geometry { mesh, normals, uvs, tangents: vec![[1.0, 0.0, 0.0, 1.0]; mesh.positions.len()] };
    // On failure (no usable triangle) every tangent keeps +X.
    let _ = bevy_mikktspace::generate_tangents(&mut g);
    for t in &mut g.tangents {
        let l = (t[0] * t[0] + t[1] * t[1] + t[2] * t[2]).sqrt();
        *t = if l > 1e-12 && l.is_finite() {
            [t[0] / l, t[1] / l, t[2] / l, if t[3] < 0.0 { 1.0 } else { -1.0 }]
        } else {
            [1.0, 0.0, 0.0, 1.0]
        };
    }
    g.tangents
}
