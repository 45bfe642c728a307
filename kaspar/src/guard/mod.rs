//! What guards an actor's state: the per-thread call chain checked before
//! any lock ([`chain`]), the actor lock itself ([`lock`]), and the
//! cross-thread wait-for registry consulted only after a failed try-lock
//! ([`deadlock`]), and the hook through which a blocking wait on a pool
//! worker lends the worker's queue out ([`blocking`]). Depends on `base`
//! only.

pub(crate) mod blocking;
pub(crate) mod chain;
pub(crate) mod deadlock;
pub(crate) mod lock;
