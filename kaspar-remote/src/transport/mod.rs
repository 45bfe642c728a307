//! The engines below the [`link`](crate::link) seam, one module each,
//! each behind the cargo feature of the same name.

#[cfg(feature = "aeron")]
pub mod aeron;
#[cfg(feature = "iceoryx2")]
pub mod iceoryx2;
