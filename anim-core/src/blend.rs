//! Pose blending in joint-local space (book chapter 12), optionally limited to a subtree.
