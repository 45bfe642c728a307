//! What guards an actor's state: the per-thread call chain checked before
//! any lock ([`chain`]), the actor lock itself ([`lock`]), and the
//! cross-thread wait-for registry consulted only after a failed try-lock
//! ([`deadlock`]). Depends on `base` only.

pub(crate) mod chain;
pub(crate) mod deadlock;
pub(crate) mod lock;
