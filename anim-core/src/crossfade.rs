//! Crossfading between clips (book chapter 12): `CrossFadeController`.
