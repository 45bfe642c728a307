//! What an actor is: the traits `#[actor]` implements ([`traits`]), the
//! context a handler receives ([`ctx`]), the shared cell that owns the state
//! and its entry protocol ([`cell`]), the address users hold ([`addr`]), and
//! supervision's and dead letters' mechanics on a cell ([`restart`],
//! [`letters`]), and, with the `metrics` or `console` feature, what a
//! system's collector reads of a cell (`observe`), and with `console`, who
//! sends to whom (`edges`).
//!
//! The one import cycle inside this folder is `traits` <-> `ctx`: the
//! handler signature in `Actor`/`Handler` names `Ctx<A>`, and `Ctx<A>` is
//! bounded by `A: Actor`. Every other edge points from `addr`/`ctx` to
//! `cell` to `traits`.

pub(crate) mod addr;
pub(crate) mod cell;
pub(crate) mod ctx;
#[cfg(feature = "console")]
pub(crate) mod edges;
pub(crate) mod instance;
pub(crate) mod letters;
#[cfg(any(feature = "metrics", feature = "console"))]
pub(crate) mod observe;
pub(crate) mod packed;
pub(crate) mod restart;
// Spans per handled message (feature `tracing`); without it, only the
// queue element alias.
pub(crate) mod trace;
pub(crate) mod traits;
