//! Trace identities that mean the same in every process, and the thread's
//! current one.
//!
//! A span id is drawn from a per-thread block of a process-wide counter
//! (one atomic add per 1024 ids, so threads never contend on it), offset
//! by a random per-process seed and scrambled with SplitMix64's finalizer.
//! The finalizer is a bijection on `u64`, so two ids of one process never
//! collide; ids of two processes collide only by chance of their seeds.
//! A trace id is minted with the span that starts a chain: its low half is
//! that span's id, its high half a second scramble under another seed.

use std::cell::Cell;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::actor::cell::ActorCell;
use crate::actor::traits::Actor;
use crate::guard::chain;

/// The identity of one handled message's span that holds across
/// processes: the chain it belongs to and the span itself.
///
/// Every kaspar span records both as fields (`trace_id`, `span_id`) and
/// its cause's span id as `parent_id`; kaspar-remote (with its `tracing`
/// feature) carries the sender's context in the frame header, so the
/// receiving process's span names the sending process's span as parent.
/// A subscriber that exports to a tracing back end can use the two ids as
/// a W3C trace context (a 16-byte trace id, an 8-byte span id); neither is
/// ever zero.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TraceContext {
    /// Shared by every span caused, directly or not, by the same first
    /// message, in every process the chain reaches.
    pub trace_id: u128,
    /// This span's own id.
    pub span_id: u64,
}

impl TraceContext {
    /// The context of the handler running on this thread (the innermost,
    /// when `fast_send` nests them); `None` outside every handler, or where
    /// no subscriber records kaspar's spans and none arrived with the
    /// message being handled.
    ///
    /// A message sent from here carries it as its cause; kaspar-remote
    /// reads it to frame a message for another process. (While a bridge
    /// delivers a frame, outside the handler it reaches, there is no
    /// handler: `None`, so that an answer the bridge sends after an inline
    /// handler returned does not name the asker's own span as its cause.)
    pub fn current() -> Option<TraceContext> {
        let now = CURRENT.get();
        if now.remote {
            None
        } else {
            now.context
        }
    }

    /// A context for a span caused by `parent`: the same chain, a fresh
    /// span id; a fresh chain when there is no parent.
    pub(super) fn child_of(parent: Option<TraceContext>) -> TraceContext {
        let span_id = fresh_span_id();
        let trace_id = match parent {
            Some(p) => p.trace_id,
            None => (u128::from(mix(span_id ^ seeds().1)) << 64) | u128::from(span_id),
        };
        TraceContext { trace_id, span_id }
    }
}

/// How a message reached its handler: the `delivery` field of its span.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Via {
    /// Inline on the caller's thread, by the `fast_send` family, which
    /// took the actor's lock.
    FastSend,
    /// Inline on its group's thread, from another member of the group (the
    /// group's lock was already held).
    Group,
    /// Queued by `send`, `ask`, `request` (or a `fast_send_void` that
    /// queued), and handled by the actor's or group's own thread.
    Queued,
    /// Queued by one of the actor's timers.
    Timer,
    /// Arrived in a kaspar-remote frame, inline or queued.
    Remote,
}

impl Via {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Via::FastSend => "fast_send",
            Via::Group => "group",
            Via::Queued => "queued",
            Via::Timer => "timer",
            Via::Remote => "remote",
        }
    }
}

/// What this thread is doing, as tracing sees it.
#[derive(Clone, Copy, Default)]
pub(super) struct Current {
    /// The handler running here, or what arrived from another process.
    pub(super) context: Option<TraceContext>,
    /// Set while a kaspar-remote bridge delivers a frame: what is sent or
    /// run from here was delivered remotely.
    pub(super) remote: bool,
}

thread_local! {
    static CURRENT: Cell<Current> = const {
        Cell::new(Current { context: None, remote: false })
    };
    /// The next span id's counter value and the end of this thread's block.
    static BLOCK: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// This thread's current state.
#[inline]
pub(super) fn current() -> Current {
    CURRENT.get()
}

/// Replaces this thread's current state; returns the one it replaced.
#[inline]
pub(super) fn replace(now: Current) -> Current {
    CURRENT.replace(now)
}

/// Runs `deliver` as the delivery of something that arrived from another
/// process with `context` (the sender's span, if its frame carried one):
/// whatever it queues or runs inline is recorded as delivered `remote`,
/// caused by `context`. For kaspar-remote's inbound bridge.
pub fn arrived_remote<R>(context: Option<TraceContext>, deliver: impl FnOnce() -> R) -> R {
    struct Restore(Current);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.set(self.0);
        }
    }
    let _restore = Restore(replace(Current {
        context,
        remote: true,
    }));
    deliver()
}

/// Whether this thread runs `cell`'s group and holds its lock already: a
/// synchronous delivery into it is then a group-internal one.
#[inline]
pub(crate) fn holds_group<A: Actor>(cell: &ActorCell<A>) -> bool {
    let lock = cell.lock();
    lock.is_group() && lock.held_by(chain::thread_token())
}

const BLOCK_LEN: u64 = 1024;

fn fresh_span_id() -> u64 {
    static NEXT_BLOCK: AtomicU64 = AtomicU64::new(0);
    loop {
        let (mut next, mut end) = BLOCK.get();
        if next == end {
            // Relaxed: the counter only hands out distinct blocks; nothing
            // else is ordered by it.
            next = NEXT_BLOCK.fetch_add(BLOCK_LEN, Ordering::Relaxed);
            end = next + BLOCK_LEN;
        }
        BLOCK.set((next + 1, end));
        let id = mix(next.wrapping_add(seeds().0));
        // One value in 2^64 maps to zero, which means "none" in a trace
        // context: skip it.
        if id != 0 {
            return id;
        }
    }
}

/// SplitMix64's finalizer: a bijection on `u64` that spreads the bits of
/// consecutive inputs over the whole word.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Two random words, fixed for the life of the process: std's randomly
/// keyed hasher over the process id and the time, so that processes
/// started together still differ.
fn seeds() -> (u64, u64) {
    static SEEDS: OnceLock<(u64, u64)> = OnceLock::new();
    *SEEDS.get_or_init(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        if let Ok(since) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            h.write_u128(since.as_nanos());
        }
        let a = h.finish();
        h.write_u64(a);
        (a, h.finish())
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn span_ids_are_distinct_and_never_zero_across_threads() {
        let per_thread = 3 * BLOCK_LEN as usize;
        let ids: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(move || (0..per_thread).map(|_| fresh_span_id()).collect::<Vec<_>>())
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let distinct: HashSet<u64> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), 4 * per_thread);
        assert!(!distinct.contains(&0));
    }

    #[test]
    fn a_child_keeps_its_parents_trace_and_a_root_starts_one() {
        let root = TraceContext::child_of(None);
        assert_eq!(root.trace_id as u64, root.span_id);
        assert_ne!(root.trace_id >> 64, 0);
        let child = TraceContext::child_of(Some(root));
        assert_eq!(child.trace_id, root.trace_id);
        assert_ne!(child.span_id, root.span_id);
        let other = TraceContext::child_of(None);
        assert_ne!(other.trace_id, root.trace_id);
    }

    #[test]
    fn a_remote_arrival_is_current_only_while_it_is_delivered() {
        let sent = TraceContext::child_of(None);
        let seen = arrived_remote(Some(sent), || {
            (current().context, current().remote, TraceContext::current())
        });
        assert_eq!(seen, (Some(sent), true, None));
        assert_eq!(TraceContext::current(), None);
        assert!(!current().remote);
    }
}
