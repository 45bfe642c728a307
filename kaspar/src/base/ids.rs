//! Identities: of an actor, of a handler within its actor (the two halves
//! of the cycle-detection key), and of a thread.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Identity of one spawned actor, unique for the life of the process.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActorId(pub(crate) u64);

impl ActorId {
    /// Stands for a whole group where the deadlock detector names what a
    /// group's thread waits for (its shared lock). No actor has it.
    pub const GROUP: ActorId = ActorId(0);

    /// The raw number, for logs and metrics.
    pub fn get(self) -> u64 {
        self.0
    }

    pub(crate) fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ActorId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Debug for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// An actor as errors, dead letters, deadlock reports and shutdown reports
/// name it: its identity, its type name, and the instance name it was given
/// at spawn, if any.
///
/// Shown as `Strategy#3`, or `book-a(Strategy#3)` for an actor spawned with
/// [`name("book-a")`](crate::Spawn::name) (or a member of a group spawned
/// with that name).
#[derive(Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Target {
    /// Its identity.
    pub id: ActorId,
    /// Its type name: `#[actor(name = "...")]` or the type's own.
    pub name: &'static str,
    /// The name it was given at spawn ([`Spawn::name`](crate::Spawn::name),
    /// [`GroupSpawn::name`](crate::GroupSpawn::name)), if any.
    pub instance: Option<Arc<str>>,
}

impl Target {
    pub(crate) fn new(id: ActorId, name: &'static str, instance: Option<Arc<str>>) -> Self {
        Target { id, name, instance }
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instance {
            Some(instance) => write!(f, "{instance}({}{:?})", self.name, self.id),
            None => write!(f, "{}{:?}", self.name, self.id),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The message-class key of one handler: its position in the actor's
/// `#[actor]` impl block. Together with an [`ActorId`] it forms the key of
/// the refined ([`CyclePolicy::Permissive`](crate::CyclePolicy::Permissive)) cycle check.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ClassId(u16);

impl ClassId {
    /// The class used for lifecycle hooks (`started`, `stopped`).
    pub const LIFECYCLE: ClassId = ClassId(u16::MAX);

    #[doc(hidden)]
    pub const fn new(index: u16) -> Self {
        ClassId(index)
    }

    /// The handler's position in its impl block.
    pub fn index(self) -> u16 {
        self.0
    }
}

std::thread_local! {
    /// The sender key of the pooled activation running on this thread, or
    /// 0 ([`sender_key`]).
    static SENDER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The key a sharded queue files the calling thread's pushes under, so
/// that one sender's messages keep to one lane (per-sender FIFO): the
/// pooled actor (or pooled group) whose activation runs on this thread,
/// whose activations move between the pool's threads; anywhere else, the
/// thread's own [`thread_key`].
#[inline]
pub(crate) fn sender_key() -> usize {
    match SENDER.with(std::cell::Cell::get) {
        0 => thread_key(),
        key => key,
    }
}

/// While alive, [`sender_key`] on this thread is a pooled activation's
/// own key; the previous one comes back on drop.
pub(crate) struct SenderScope(usize);

impl SenderScope {
    /// Makes `key` (nonzero: the activation's actor's address) this
    /// thread's sender key.
    #[inline]
    pub(crate) fn enter(key: usize) -> SenderScope {
        debug_assert_ne!(key, 0);
        SenderScope(SENDER.with(|s| s.replace(key)))
    }
}

impl Drop for SenderScope {
    #[inline]
    fn drop(&mut self) {
        SENDER.with(|s| s.set(self.0));
    }
}

/// A per-thread number for spreading threads over the lanes of a sharded
/// queue: stable for the life of the thread, distinct between live threads.
/// (The call chain names threads by its own token, `guard::chain::
/// thread_token`; the mailbox layer does not reach into the guard layer.)
#[inline]
pub(crate) fn thread_key() -> usize {
    use std::cell::Cell;
    thread_local! {
        static KEY: Cell<usize> = const { Cell::new(0) };
    }
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    KEY.with(|key| match key.get() {
        0 => {
            let fresh = NEXT.fetch_add(1, Ordering::Relaxed);
            key.set(fresh);
            fresh
        }
        k => k,
    })
}
