//! The hook a scheduler's worker sets so that a blocking wait on its thread
//! does not hold up the actors queued behind it.
//!
//! Every blocking wait kaspar offers goes through the wait-for registry
//! ([`deadlock`](super::deadlock)) before it blocks, and ends when the
//! returned `Registered` guard is dropped. That guard carries an
//! [`InPlace`] from [`block_in_place`]: on a thread that set a hook (a pool
//! worker running a pooled actor's handler), the hook hears that the
//! thread is about to block and when it is back, and lends its run queue to
//! other threads meanwhile. On any other thread there is no hook, and the
//! guard is an empty `Option`: one thread-local read on a path that is
//! about to sleep anyway.

use std::cell::RefCell;
use std::rc::Rc;

use crate::base::sync::thread_local;

/// What a thread that may block hands its work to.
pub(crate) trait BlockingHook {
    /// The thread is about to block (it may still find what it waits for
    /// at once).
    fn enter(&self);
    /// The thread is back from the wait that `enter` announced.
    fn exit(&self);
    /// Whether a wait of `kind` must not block this thread at all (it
    /// runs an async runtime's tasks, which the wait would hold up): the
    /// wait is then refused as a deadlock before it is registered.
    #[cfg(any(feature = "tokio", feature = "sim"))]
    fn refuses(&self, _kind: crate::guard::deadlock::WaitKind) -> bool {
        false
    }
}

thread_local! {
    static HOOK: RefCell<Option<Rc<dyn BlockingHook>>> = RefCell::new(None);
}

/// Sets (or with `None`, clears) the calling thread's hook.
pub(crate) fn set_hook(hook: Option<Rc<dyn BlockingHook>>) {
    HOOK.with(|h| *h.borrow_mut() = hook);
}

/// Sets the calling thread's hook and returns the one it replaces.
#[cfg(any(feature = "tokio", feature = "sim"))]
pub(crate) fn replace_hook(hook: Option<Rc<dyn BlockingHook>>) -> Option<Rc<dyn BlockingHook>> {
    HOOK.with(|h| std::mem::replace(&mut *h.borrow_mut(), hook))
}

/// Whether the calling thread's hook refuses a blocking wait of `kind`.
#[cfg(any(feature = "tokio", feature = "sim"))]
pub(crate) fn refuses(kind: crate::guard::deadlock::WaitKind) -> bool {
    HOOK.with(|h| h.borrow().as_ref().is_some_and(|h| h.refuses(kind)))
}

/// A wait in progress on a thread with a hook: tells the hook when the
/// wait ends.
pub(crate) struct InPlace(Option<Rc<dyn BlockingHook>>);

/// Announces a blocking wait to the calling thread's hook, if it has one;
/// the returned guard announces its end when dropped.
#[inline]
pub(crate) fn block_in_place() -> InPlace {
    let hook = HOOK.with(|h| h.borrow().clone());
    if let Some(hook) = &hook {
        hook.enter();
    }
    InPlace(hook)
}

impl Drop for InPlace {
    fn drop(&mut self) {
        if let Some(hook) = self.0.take() {
            hook.exit();
        }
    }
}
