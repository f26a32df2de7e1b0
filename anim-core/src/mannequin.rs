//! The project's own default character: a procedurally generated humanoid mannequin with clips.
