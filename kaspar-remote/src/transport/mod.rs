//! The engines below the [`link`](crate::link) seam, one module each,
//! each behind the cargo feature of the same name, and the in-process
//! [`loopback`] that tests and examples use. Only `link` and `topic` (whose
//! engines these are too) lie below; nothing in the crate uses an engine
//! but through the seam. The simulated network (`sim`, feature `sim`)
//! also makes and steps its nodes, so it uses `node` too.

#[cfg(feature = "aeron")]
pub mod aeron;
#[cfg(feature = "iceoryx2")]
pub mod iceoryx2;
pub mod loopback;
#[cfg(feature = "sim")]
pub mod sim;
