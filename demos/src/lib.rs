//! Shared code for the demo binaries.
