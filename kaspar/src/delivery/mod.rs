//! How a message reaches a handler: the synchronous `fast_send` family on
//! the caller's thread ([`fast_send`]), the run loop that drains a
//! mailbox on the actor's or group's own thread ([`run_loop`]), and the
//! pool that runs many actors on a few worker threads ([`sched`]).

pub(crate) mod fast_send;
#[cfg(feature = "journal")]
pub(crate) mod flight;
pub(crate) mod recipient;
pub(crate) mod run_loop;
pub(crate) mod sched;
