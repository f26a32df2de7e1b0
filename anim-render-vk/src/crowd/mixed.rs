//! Mixed crowds: several character types (each its own mesh, material, atlas and, when set,
//! mesh levels of detail) in one crowd. One [`anim_crowd::crowd::Crowd`] plays them all: its
//! clip list is every type's atlas clips one type after another, so a character's clip
//! index names its type. [`Renderer::set_mixed_crowd_instances`] hands each record to its
//! type (its clip index made the type's own) and [`Renderer::mixed_crowd_draws`] gives a
//! frame one [`CrowdDraw`] per type: the frame's list passes (frustum culling, level
//! choice) are recorded together in one compute pass, one dispatch per type, and each type
//! draws with one indirect draw per level.

use super::buffers::MixedCrowd;
use super::error::CrowdError;
use super::{CrowdDraw, CrowdId, CrowdType, MixedCrowdId};
use crate::error::RenderError;
use crate::renderer::Renderer;
use anim_crowd::crowd::CrowdInstance;

impl Renderer {
    /// Registers a crowd of several character types (see [`Renderer::add_crowd`] for each).
    /// The mixed clip list is `types[0].atlas.clips()`, then `types[1]`'s, and so on: build
    /// the [`Crowd`](anim_crowd::crowd::Crowd) that plays the characters from it.
    ///
    /// # Errors
    /// As [`Renderer::add_crowd`], for the first type that fails; [`RenderError::Input`] for
    /// no types.
    pub fn add_mixed_crowd(&mut self, types: &[CrowdType<'_>]) -> Result<MixedCrowdId, RenderError> {
        if types.is_empty() {
            return Err(RenderError::Input("a mixed crowd needs at least one character type".into()));
        }
        let mut mixed = MixedCrowd { types: Vec::with_capacity(types.len()), clip_base: vec![0] };
        for t in types {
            mixed.types.push(self.add_crowd(t.mesh, t.atlas, t.capacity)?);
            let next = mixed.clip_base.last().copied().unwrap_or(0) + t.atlas.clips().len() as u32;
            mixed.clip_base.push(next);
        }
        self.mixed_crowds.push(mixed);
        Ok(MixedCrowdId(self.mixed_crowds.len() - 1))
    }

    /// The crowd of each type of a mixed crowd, in registration order (for the per-type
    /// readbacks: [`Renderer::crowd_visible`], [`Renderer::crowd_level_counts`], and for
    /// [`Renderer::set_crowd_lods`]).
    pub fn mixed_crowd_types(&self, id: MixedCrowdId) -> Option<&[CrowdId]> {
        self.mixed_crowds.get(id.0).map(|m| &m.types[..])
    }

    /// Sets the characters of a mixed crowd from records whose clip index is a mixed one
    /// (as a [`Crowd`](anim_crowd::crowd::Crowd) over the mixed clip list writes them):
    /// each goes to its type with the type's own clip index. Nothing is allocated once
    /// each type has held as many characters.
    ///
    /// # Errors
    /// [`CrowdError::UnknownCrowd`] for an unknown handle; [`CrowdError::InvalidInstance`]
    /// for a clip index beyond every type's clips (or one the record's frames do not fit);
    /// [`CrowdError::CapacityExceeded`] when a type gets more characters than its capacity.
    /// After an error the crowd has no characters until they are set again. Characters
    /// crossfade between clips of their own type only (a record blending clips of two types
    /// draws the second with the first type's atlas).
    pub fn set_mixed_crowd_instances(
        &mut self,
        id: MixedCrowdId,
        instances: &[CrowdInstance],
    ) -> Result<(), RenderError> {
        // Taken out while the types' crowds are written (and put back), so nothing is copied.
        let m = std::mem::take(self.mixed_crowds.get_mut(id.0).ok_or(CrowdError::UnknownCrowd(id.0))?);
        let result = self.split_mixed(&m, instances);
        if result.is_err() {
            for &crowd in &m.types {
                self.crowds[crowd.0].pending.clear();
            }
        }
        self.mixed_crowds[id.0] = m;
        result
    }

    fn split_mixed(&mut self, m: &MixedCrowd, instances: &[CrowdInstance]) -> Result<(), RenderError> {
        let total = *m.clip_base.last().expect("clip_base starts with 0");
        for (index, c) in instances.iter().enumerate() {
            let clip = c.factors[3];
            if !(clip >= 0.0 && clip.fract() == 0.0 && (clip as u32) < total) {
                let reason = format!("factors[3] (mixed clip index) is {clip}, not one of {total} clips");
                return Err(CrowdError::InvalidInstance { index, reason }.into());
            }
        }
        let type_of = |clip: u32| m.clip_base.partition_point(|&b| b <= clip) - 1;
        for (t, &crowd) in m.types.iter().enumerate() {
            let c = &mut self.crowds[crowd.0];
            let mut staged = std::mem::take(&mut c.pending);
            staged.clear();
            for r in instances.iter().filter(|r| type_of(r.factors[3] as u32) == t) {
                let mut r = *r;
                r.factors[3] -= m.clip_base[t] as f32;
                staged.push(r);
            }
            let checked = c.check_instances(&staged);
            c.pending = staged;
            checked?;
        }
        Ok(())
    }

    /// One draw per type of a mixed crowd, each `template` with its type's crowd (add them
    /// all to the frame).
    pub fn mixed_crowd_draws(&self, id: MixedCrowdId, template: CrowdDraw) -> impl Iterator<Item = CrowdDraw> + '_ {
        self.mixed_crowds
            .get(id.0)
            .map(|m| &m.types[..])
            .unwrap_or(&[])
            .iter()
            .map(move |&crowd| CrowdDraw { crowd, ..template })
    }
}
