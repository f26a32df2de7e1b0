//! Additive animation (book chapter 12): additive base poses and adding a layer onto a pose.
