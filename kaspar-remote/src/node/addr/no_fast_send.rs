//! Why a [`RemoteAddr`] has no `fast_send`, said by the compiler.
//!
//! The synchronous family runs the handler on the caller's thread under
//! the actor's lock, so it needs the actor in this address space. A
//! `RemoteAddr` therefore never offers it; but "no method named
//! `fast_send`" does not tell a newcomer what to write instead. So the
//! five names exist on `RemoteAddr`, hidden from the docs, each bounded by
//! [`InThisProcess`], which no remote address has: a call is a compile
//! error whose message names the alternatives.

use kaspar::{Delivered, FastSendError, SendError};

use crate::node::addr::RemoteAddr;

/// What the `fast_send` family needs of an address: its actor is in this
/// process, so its handler can run on the calling thread.
///
/// No type implements it (it is sealed): it exists so that
/// `remote.fast_send(msg)` on a [`RemoteAddr`] fails to compile with a
/// message that says what to use instead: [`RemoteAddr::send`],
/// [`RemoteAddr::ask`] or [`RemoteAddr::request`], or an
/// [`ActorRef`](crate::ActorRef), whose
/// [`fast_send_or_send`](crate::ActorRef::fast_send_or_send) runs inline
/// when the actor turns out to be local and sends when it is remote.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot `fast_send`: its actor runs in another process",
    label = "a handler in another process cannot run on this thread",
    note = "use `send`, `ask` or `request`, which a `RemoteAddr` offers",
    note = "or hold an `ActorRef` and call `fast_send_or_send`: inline when the actor is local, `send` when it is remote"
)]
pub trait InThisProcess: sealed::Sealed {}

mod sealed {
    /// Keeps [`InThisProcess`](super::InThisProcess) unimplementable
    /// outside this module, where nothing implements it.
    pub trait Sealed {}
}

/// One hidden method per synchronous delivery, each unreachable: its bound
/// cannot hold, so a call never compiles. Written out rather than made by
/// a macro, so the diagnostic shows no macro expansion.
impl<A> RemoteAddr<A> {
    #[doc(hidden)]
    pub fn fast_send<M>(&self, _msg: M) -> Result<(), FastSendError<M>>
    where
        Self: InThisProcess,
    {
        unreachable!("InThisProcess has no implementations")
    }

    #[doc(hidden)]
    pub fn fast_send_spin<M>(&self, _msg: M) -> Result<(), FastSendError<M>>
    where
        Self: InThisProcess,
    {
        unreachable!("InThisProcess has no implementations")
    }

    #[doc(hidden)]
    pub fn fast_send_x<M>(&self, _msg: M) -> Result<(), FastSendError<M>>
    where
        Self: InThisProcess,
    {
        unreachable!("InThisProcess has no implementations")
    }

    #[doc(hidden)]
    pub fn fast_send_adaptive<M>(&self, _msg: M) -> Result<(), FastSendError<M>>
    where
        Self: InThisProcess,
    {
        unreachable!("InThisProcess has no implementations")
    }

    #[doc(hidden)]
    pub fn fast_send_void<M>(&self, _msg: M) -> Result<Delivered, SendError<M>>
    where
        Self: InThisProcess,
    {
        unreachable!("InThisProcess has no implementations")
    }
}
