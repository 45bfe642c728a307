//! Savina's chameneos, one file per framework (kept apart from the other
//! four benchmarks to keep each file short).

pub mod actix;
pub mod kameo;
pub mod kaspar;
pub mod ractor;
pub mod xtra;
