//! The engines below the [`link`](crate::link) seam, each behind its feature.

#[cfg(feature = "aeron")]
pub mod aeron;
