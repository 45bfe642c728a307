//! Cross-thread deadlock detection: a global wait-for registry (beyond the
//! paper; its future work #1).
//!
//! The per-thread call chain cannot see a cycle spread over threads: thread 1
//! runs `A` and waits for `B` while thread 2 runs `B` and waits for `A`.
//! Every blocking wait kaspar offers is an edge of the graph:
//!
//! * a synchronous delivery waiting for an actor's **lock** (`fast_send`,
//!   `fast_send_spin`, `fast_send_adaptive`) waits for the lock's *owner*;
//! * a thread waiting on an **`ask`** (`Ask::wait`, `Ask::wait_timeout`)
//!   waits for the thread that runs the target's queue (its *consumer*: the
//!   actor's own thread or its group's), which must handle the message;
//! * a send waiting for **room** in a full mailbox (`WhenFull::Wait`) waits
//!   for that same consumer to pop.
//!
//! Before a thread blocks (only then: an uncontended call, an answered ask
//! and a push with room never come here) it takes the registry mutex and
//! walks
//!
//! ```text
//! wait --owner or consumer--> thread --waits for--> wait --> ...
//! ```
//!
//! If the walk arrives back at the calling thread, waiting would close a
//! cycle: the call returns a `Deadlock` error carrying the cycle
//! ([`FastSendError::Deadlock`](crate::FastSendError),
//! [`AskError::Deadlock`](crate::AskError::Deadlock),
//! [`SendError::Deadlock`](crate::SendError::Deadlock), the last two
//! handing nothing and the message back respectively) instead. Otherwise
//! the thread records its own edge and waits. Because
//! registration and walk happen under one mutex, of the threads that close a
//! cycle the last one to register always sees it; the others stay blocked
//! until it backs out and releases what it holds.
//!
//! A registered thread is blocked, so the locks it holds, and the owner
//! words of those locks, are stable while its entry exists. A consumer
//! word names a thread that is running its loop; an idle consumer is not
//! registered (it waits for messages, not for another thread), so a walk
//! through it ends: the message will be handled.

use std::sync::Arc;

use crate::base::ids::Target;
use crate::base::sync::Mutex;
use crate::guard::blocking;
use crate::guard::chain::{self, CallChain};
use crate::guard::lock::ActorLock;

/// What a blocked thread waits for.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum WaitKind {
    /// An actor's lock (a waiting `fast_send`): the thread holding it.
    Lock,
    /// The reply to an `ask`: the thread running the target's queue.
    Reply,
    /// Room in a full mailbox: the thread running the target's queue.
    Room,
}

/// A wait, as the walk follows it: which lock, and which of its threads.
#[derive(Clone)]
pub(crate) struct WaitOn {
    kind: WaitKind,
    lock: Arc<ActorLock>,
}

impl WaitOn {
    /// Waiting to take `lock`.
    pub(crate) fn lock(lock: &Arc<ActorLock>) -> Self {
        WaitOn {
            kind: WaitKind::Lock,
            lock: Arc::clone(lock),
        }
    }

    /// Waiting for the thread that consumes `lock`'s queue.
    pub(crate) fn consumer(kind: WaitKind, lock: &Arc<ActorLock>) -> Self {
        debug_assert!(kind != WaitKind::Lock);
        WaitOn {
            kind,
            lock: Arc::clone(lock),
        }
    }

    /// The threads this wait depends on (0 for none). A lock waits for its
    /// owner. A reply waits for the consumer to pop the message *and* for
    /// the lock to run its handler under: whoever holds the lock holds up
    /// the reply too, which is how a handler that asks its own actor and
    /// waits is refused whichever way it was reached (from its queue, the
    /// consumer is the waiter; inline, by `fast_send` from another thread,
    /// the waiter holds the lock). Room waits for the consumer to pop, and
    /// the holder is counted too, conservatively: a consumer that has
    /// popped waits for the lock before it pops again, so once other
    /// senders fill the freed room, only the holder's release makes more;
    /// and a handler that sends to its own full mailbox must be refused
    /// inline as it is from its queue (where it would wait for itself), or
    /// it could tell the two apart.
    fn holders(&self) -> [usize; 2] {
        match self.kind {
            WaitKind::Lock => [self.lock.owner(), 0],
            // The holder first: a waiter that holds the lock itself is a
            // cycle of one edge, however busy the consumer is.
            WaitKind::Reply | WaitKind::Room => [self.lock.owner(), self.lock.consumer()],
        }
    }
}

/// One thread's wait, as recorded in the registry.
struct WaitEntry {
    thread: usize,
    on: WaitOn,
    target: Target,
    chain: CallChain,
}

/// The wait-for graph: one entry per blocked thread. An edge runs from a
/// waiting thread to what it waits for, and from that to the thread it
/// depends on (a lock's owner, a queue's consumer).
#[derive(Default)]
struct Registry {
    waiting: Vec<WaitEntry>,
}

#[cfg(not(loom))]
static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    waiting: Vec::new(),
});

#[cfg(loom)]
loom::lazy_static! {
    static ref REGISTRY: Mutex<Registry> = Mutex::new(Registry::default());
}

/// One edge of a detected cycle: a thread, what it was running, and the
/// actor it waits for, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitEdge {
    /// Runtime token of the waiting thread (not an OS thread id).
    pub thread: usize,
    /// The waiting thread's call chain.
    pub chain: CallChain,
    /// The actor it waits for (for a group's thread waiting for its own
    /// lock: the group, with id [`ActorId::GROUP`](crate::ActorId::GROUP)).
    pub waits_for: Target,
    /// For its lock, for a reply from it, or for room in its mailbox.
    pub kind: WaitKind,
}

/// Removes the calling thread's registry entry on drop, and tells a pool
/// worker's blocking hook that the wait is over ([`blocking`]).
pub(crate) struct Registered {
    thread: usize,
    /// Dropped after the entry is removed (fields drop after `drop`).
    _in_place: blocking::InPlace,
}

impl Registered {
    /// The guard of a wait by `thread` (0: not in the graph), announced to
    /// the thread's blocking hook.
    fn new(thread: usize) -> Self {
        Registered {
            thread,
            _in_place: blocking::block_in_place(),
        }
    }
}

/// How often a waiter that can back out (an `ask` being waited on, a send
/// waiting for room) looks at the graph again while it waits. A waiter
/// that cannot back out (a run loop waiting for its own actor's lock)
/// registers without refusing, and may be the one that closes a cycle;
/// the others in the cycle then find it on their next look.
pub(crate) const RECHECK: std::time::Duration = std::time::Duration::from_millis(20);

impl Registered {
    /// Whether the wait is in the graph (a thread nobody can wait for
    /// skips it; see `before_wait`).
    pub(crate) fn in_graph(&self) -> bool {
        self.thread != 0
    }

    /// Whether the wait this guard registered has since become part of a
    /// cycle (closed by a waiter that registered later and cannot back
    /// out). On a cycle returns its edges, this thread's first.
    #[cold]
    pub(crate) fn recheck(&self) -> Result<(), Vec<WaitEdge>> {
        if !self.in_graph() {
            return Ok(());
        }
        let reg = REGISTRY.lock();
        let Some(mine) = reg.waiter(self.thread) else {
            return Ok(());
        };
        if reg.closes_cycle(self.thread, &mine.on) {
            let (on, target, chain) = (mine.on.clone(), mine.target.clone(), mine.chain.clone());
            return Err(reg.cycle_edges(self.thread, &on, target, chain));
        }
        Ok(())
    }
}

/// Room for this many waiters registered at once, reserved when a system is
/// made ([`reserve`]), so that registering a wait does not allocate: a run
/// loop that finds its actor's lock held registers from a path that the
/// allocation tests count.
const RESERVED_WAITERS: usize = 64;

/// Reserves room in the registry for [`RESERVED_WAITERS`] waiters (once;
/// later calls find it there). Called by `System::with_config`.
pub(crate) fn reserve() {
    let mut reg = REGISTRY.lock();
    let len = reg.waiting.len();
    reg.waiting.reserve(RESERVED_WAITERS.saturating_sub(len));
}

/// Registers the calling thread as waiting on `on` without refusing: for a
/// waiter that has no way to back out (a run loop taking its own actor's
/// lock). If this closes a cycle, the waiters in it that can back out find
/// it when they [`recheck`](Registered::recheck).
///
/// `target` names what is waited for; it is called only here, off the
/// path that finds the lock free.
#[cold]
pub(crate) fn register_wait(me: usize, on: WaitOn, target: impl FnOnce() -> Target) -> Registered {
    let target = target();
    REGISTRY.lock().waiting.push(WaitEntry {
        thread: me,
        on,
        target,
        chain: chain::snapshot(),
    });
    Registered::new(me)
}

impl Drop for Registered {
    fn drop(&mut self) {
        if self.thread != 0 {
            REGISTRY.lock().remove(self.thread);
        }
    }
}

/// A wait refused before it began, as a cycle of one edge: the caller's
/// own, on `waits_for` (a wait that could only end on the calling thread,
/// which it would block).
pub(crate) fn own_edge(me: usize, kind: WaitKind, waits_for: Target) -> Vec<WaitEdge> {
    vec![WaitEdge {
        thread: me,
        chain: chain::snapshot(),
        waits_for,
        kind,
    }]
}

/// Walks the wait-for graph from `on`. On a cycle through the calling
/// thread returns its edges (the caller's own edge first); otherwise
/// registers the caller as waiting on `on` and returns a guard that
/// deregisters it.
///
/// Allocates only to report a cycle, or to record a non-empty call chain
/// (a wait begun from inside a handler). `target` names what is waited
/// for; it is called only if the registry is consulted.
pub(crate) fn before_wait(
    me: usize,
    on: WaitOn,
    target: impl FnOnce() -> Target,
) -> Result<Registered, Vec<WaitEdge>> {
    // A thread that runs a tokio runtime's tasks (a tokio-hosted pooled
    // actor's activation) must not block on another actor: the actor it
    // waits for may need this very thread to run. Refused as a cycle of
    // one edge, the caller's own (`delivery/sched/tokio.rs`).
    #[cfg(any(feature = "tokio", feature = "sim"))]
    if blocking::refuses(on.kind) {
        return Err(own_edge(me, on.kind, target()));
    }
    if !chain::may_be_waited_for() {
        // Nobody can be waiting for this thread, so its wait closes no
        // cycle: skip the registry (the common case of a plain thread
        // waiting on an ask, which would otherwise take its global lock).
        return Ok(Registered::new(0));
    }
    let target = target();
    let mut reg = REGISTRY.lock();
    if reg.closes_cycle(me, &on) {
        return Err(reg.cycle_edges(me, &on, target, chain::snapshot()));
    }
    reg.waiting.push(WaitEntry {
        thread: me,
        on,
        target,
        chain: chain::snapshot(),
    });
    Ok(Registered::new(me))
}

impl Registry {
    fn remove(&mut self, thread: usize) {
        if let Some(i) = self.waiting.iter().position(|e| e.thread == thread) {
            self.waiting.swap_remove(i);
        }
    }

    fn waiter(&self, thread: usize) -> Option<&WaitEntry> {
        self.waiting
            .iter()
            .find(|e| thread != 0 && e.thread == thread)
    }

    /// Whether waiting on `on` would close a cycle through `me`.
    fn closes_cycle(&self, me: usize, on: &WaitOn) -> bool {
        self.search(me, on, &mut Marks::new(), &mut Marks::new())
    }

    /// Follows what `on` waits for (its holders), what those wait for,
    /// and so on, depth first; returns the registered waits on the way
    /// from `on` back to `me` (indices into `waiting`, in wait order), if
    /// the walk reaches `me`. A thread is visited once, so the walk ends
    /// even where the registry holds a cycle that does not include `me`.
    fn path_to(&self, me: usize, on: &WaitOn) -> Option<Vec<usize>> {
        let mut path = Marks::new();
        self.search(me, on, &mut Marks::new(), &mut path)
            .then(|| path.iter().collect())
    }

    fn search(&self, me: usize, on: &WaitOn, visited: &mut Marks, path: &mut Marks) -> bool {
        for holder in on.holders() {
            if holder == 0 {
                continue;
            }
            if holder == me {
                return true;
            }
            if visited.contains(holder) {
                continue;
            }
            visited.push(holder);
            let Some(i) = self.waiting.iter().position(|e| e.thread == holder) else {
                continue;
            };
            path.push(i);
            if self.search(me, &self.waiting[i].on, visited, path) {
                return true;
            }
            path.pop();
        }
        false
    }

    /// The cycle's edges in wait order: the caller's own edge first, then the
    /// thread holding up what it waits for, and so on back to the caller.
    #[cold]
    fn cycle_edges(
        &self,
        me: usize,
        on: &WaitOn,
        target: Target,
        my_chain: CallChain,
    ) -> Vec<WaitEdge> {
        let mut edges = vec![WaitEdge {
            thread: me,
            chain: my_chain,
            waits_for: target,
            kind: on.kind,
        }];
        for i in self.path_to(me, on).unwrap_or_default() {
            let entry = &self.waiting[i];
            edges.push(WaitEdge {
                thread: entry.thread,
                chain: entry.chain.clone(),
                waits_for: entry.target.clone(),
                kind: entry.on.kind,
            });
        }
        edges
    }
}

/// A walk's small stack of numbers (threads visited, waits on the path):
/// inline up to [`Marks::INLINE`], so the walk before a wait does not
/// allocate in the common case of a few threads (the allocation tests
/// count a run loop's registered wait).
struct Marks {
    inline: [usize; Marks::INLINE],
    len: usize,
    spill: Vec<usize>,
}

impl Marks {
    const INLINE: usize = 16;

    fn new() -> Self {
        Marks {
            inline: [0; Marks::INLINE],
            len: 0,
            spill: Vec::new(),
        }
    }

    fn push(&mut self, n: usize) {
        if self.len < Marks::INLINE {
            self.inline[self.len] = n;
        } else {
            self.spill.push(n);
        }
        self.len += 1;
    }

    fn pop(&mut self) {
        self.len -= 1;
        if self.len >= Marks::INLINE {
            self.spill.pop();
        }
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.inline[..self.len.min(Marks::INLINE)]
            .iter()
            .chain(self.spill.iter())
            .copied()
    }

    fn contains(&self, n: usize) -> bool {
        self.iter().any(|m| m == n)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::base::ids::ActorId;

    // Tokens are addresses of 8-aligned thread-local data.
    const A: usize = 8 * 101;
    const B: usize = 8 * 102;
    const C: usize = 8 * 103;

    fn lock_held_by(thread: usize) -> Arc<ActorLock> {
        let lock = Arc::new(ActorLock::new(false));
        assert!(lock.try_acquire(thread));
        lock
    }

    fn waiting(thread: usize, lock: &Arc<ActorLock>, actor: u64) -> WaitEntry {
        WaitEntry {
            thread,
            on: WaitOn::lock(lock),
            target: Target::new(ActorId(actor), "target", None),
            chain: CallChain::default(),
        }
    }

    fn release(locks: &[&Arc<ActorLock>]) {
        for lock in locks {
            // SAFETY: each lock was acquired by `lock_held_by` in this test,
            // for the thread its owner names, and is released once, here.
            unsafe { lock.release(lock.owner()) };
        }
    }

    /// A holds L1 and waits for L2; B holds L2 and waits for L3; C holds L3
    /// and is about to wait for L1.
    #[test]
    fn a_three_thread_ring_is_reported_from_the_closing_thread_in_wait_order() {
        let (l1, l2, l3) = (lock_held_by(A), lock_held_by(B), lock_held_by(C));
        let reg = Registry {
            waiting: vec![waiting(B, &l3, 3), waiting(A, &l2, 2)],
        };
        let on = WaitOn::lock(&l1);
        assert!(reg.closes_cycle(C, &on));
        let one = Target::new(ActorId(1), "one", Some("first".into()));
        let edges = reg.cycle_edges(C, &on, one, CallChain::default());
        let order: Vec<(usize, u64)> = edges
            .iter()
            .map(|e| (e.thread, e.waits_for.id.get()))
            .collect();
        assert_eq!(order, vec![(C, 1), (A, 2), (B, 3)]);
        assert_eq!(edges[0].waits_for.name, "one");
        assert_eq!(format!("{}", edges[0].waits_for), "first(one#1)");
        assert_eq!(format!("{}", edges[1].waits_for), "target#2");
        release(&[&l1, &l2, &l3]);
    }

    #[test]
    fn a_chain_that_ends_at_a_running_thread_is_no_cycle() {
        // A holds L1 and waits for L2, whose holder B is running, not waiting.
        let (l1, l2) = (lock_held_by(A), lock_held_by(B));
        let reg = Registry {
            waiting: vec![waiting(A, &l2, 2)],
        };
        assert!(!reg.closes_cycle(C, &WaitOn::lock(&l1)));
        release(&[&l1, &l2]);
    }

    #[test]
    fn a_cycle_among_other_threads_is_not_the_callers_and_the_walk_ends() {
        // A and B deadlock each other (a ring the registry should never
        // hold, but the walk must still end); C waits for L1.
        let (l1, l2) = (lock_held_by(A), lock_held_by(B));
        let reg = Registry {
            waiting: vec![waiting(A, &l2, 2), waiting(B, &l1, 1)],
        };
        assert!(!reg.closes_cycle(C, &WaitOn::lock(&l1)));
        release(&[&l1, &l2]);
    }

    /// A holds L1 and waits for an `ask` to the actor behind L2, whose
    /// consumer thread B waits for L1: the reply can never come.
    #[test]
    fn a_reply_wait_follows_the_targets_consumer_thread() {
        let l1 = lock_held_by(A);
        let l2 = Arc::new(ActorLock::new(false));
        let _consumer = l2.consuming(B);
        let reg = Registry {
            waiting: vec![waiting(B, &l1, 1)],
        };
        let reply = WaitOn::consumer(WaitKind::Reply, &l2);
        assert!(reg.closes_cycle(A, &reply));
        let two = Target::new(ActorId(2), "two", None);
        let edges = reg.cycle_edges(A, &reply, two, CallChain::default());
        let kinds: Vec<_> = edges.iter().map(|e| (e.thread, e.kind)).collect();
        assert_eq!(kinds, vec![(A, WaitKind::Reply), (B, WaitKind::Lock)]);
        // Waiting on one's own queue (an actor asking itself) is a cycle
        // of one.
        assert!(Registry::default().closes_cycle(B, &reply));
        // With no consumer running, the walk ends.
        drop(_consumer);
        assert!(!reg.closes_cycle(A, &reply));
        release(&[&l1]);
    }

    /// A holds the lock of the actor it asks (it runs one of its handlers
    /// inline) and waits for the reply: whoever runs the queue, the
    /// handler needs the lock A holds. A cycle of one edge.
    #[test]
    fn a_reply_wait_on_an_actor_whose_lock_the_waiter_holds_is_a_cycle() {
        let l1 = lock_held_by(A);
        let _consumer = l1.consuming(B); // B idle, waiting for messages
        let reply = WaitOn::consumer(WaitKind::Reply, &l1);
        let reg = Registry::default();
        assert!(reg.closes_cycle(A, &reply));
        let one = Target::new(ActorId(1), "one", None);
        let edges = reg.cycle_edges(A, &reply, one, CallChain::default());
        let kinds: Vec<_> = edges.iter().map(|e| (e.thread, e.kind)).collect();
        assert_eq!(kinds, vec![(A, WaitKind::Reply)]);
        // Room in its mailbox too (conservatively: see `holders`).
        assert!(reg.closes_cycle(A, &WaitOn::consumer(WaitKind::Room, &l1)));
        release(&[&l1]);
    }

    /// A holds L1 and asks the actor behind L2, whose consumer C is idle
    /// but whose lock B holds; B waits for L1. The walk goes through the
    /// lock's holder, not only the consumer.
    #[test]
    fn a_reply_wait_follows_the_lock_holder_where_the_consumer_is_idle() {
        let (l1, l2) = (lock_held_by(A), lock_held_by(B));
        let _consumer = l2.consuming(C);
        let reg = Registry {
            waiting: vec![waiting(B, &l1, 1)],
        };
        let reply = WaitOn::consumer(WaitKind::Reply, &l2);
        assert!(reg.closes_cycle(A, &reply));
        let two = Target::new(ActorId(2), "two", None);
        let edges = reg.cycle_edges(A, &reply, two, CallChain::default());
        let kinds: Vec<_> = edges.iter().map(|e| (e.thread, e.kind)).collect();
        assert_eq!(kinds, vec![(A, WaitKind::Reply), (B, WaitKind::Lock)]);
        release(&[&l1, &l2]);
    }

    /// Both holders of a reply wait lead on, one to a running thread, the
    /// other back to the caller: the walk tries both.
    #[test]
    fn the_walk_tries_every_holder_before_it_gives_up() {
        let (l1, l2, l3) = (lock_held_by(A), lock_held_by(B), lock_held_by(C));
        // L2's consumer is C, which waits for L3 (its own: running, no
        // further edge); L2's owner B waits for L1, held by A.
        let _consumer = l2.consuming(C);
        let reg = Registry {
            waiting: vec![waiting(C, &l3, 3), waiting(B, &l1, 1)],
        };
        let reply = WaitOn::consumer(WaitKind::Reply, &l2);
        assert!(reg.closes_cycle(A, &reply));
        let two = Target::new(ActorId(2), "two", None);
        let order: Vec<usize> = reg
            .cycle_edges(A, &reply, two, CallChain::default())
            .iter()
            .map(|e| e.thread)
            .collect();
        assert_eq!(order, vec![A, B], "the dead end through C is not reported");
        release(&[&l1, &l2, &l3]);
    }

    #[test]
    fn a_walk_past_sixteen_threads_spills_and_still_finds_the_cycle() {
        // Twenty threads in a row: T(i) holds L(i) and waits for L(i+1),
        // the last one for the caller's lock. The caller closes the ring
        // by waiting for L(0): more threads than `Marks` keeps inline.
        let me = 8 * 500;
        let tokens: Vec<usize> = (0..20).map(|i| 8 * (200 + i)).collect();
        let locks: Vec<_> = tokens.iter().map(|&t| lock_held_by(t)).collect();
        let mine = lock_held_by(me);
        let mut waiting_list = Vec::new();
        for i in 0..20 {
            let next = if i + 1 < 20 { &locks[i + 1] } else { &mine };
            waiting_list.push(waiting(tokens[i], next, i as u64));
        }
        let reg = Registry {
            waiting: waiting_list,
        };
        let on = WaitOn::lock(&locks[0]);
        assert!(reg.closes_cycle(me, &on));
        let t = Target::new(ActorId(99), "x", None);
        assert_eq!(reg.cycle_edges(me, &on, t, CallChain::default()).len(), 21);
        let mut all: Vec<&Arc<ActorLock>> = locks.iter().collect();
        all.push(&mine);
        release(&all);
    }

    #[test]
    fn a_thread_nobody_can_wait_for_skips_the_registry() {
        static NAMES: chain::FrameNames = chain::FrameNames {
            actor: "T",
            classes: &[],
        };
        let lock = lock_held_by(A);
        let me = chain::thread_token();
        let named = || -> Target { panic!("a wait outside the graph names nobody") };
        let plain = before_wait(me, WaitOn::lock(&lock), named).unwrap();
        assert!(
            !plain.in_graph(),
            "no handler, no run loop: not in the graph"
        );
        assert!(REGISTRY.lock().waiter(me).is_none());
        drop(plain);
        let head = chain::FrameHead {
            actor: ActorId(9),
            names: &NAMES,
        };
        let _frame = chain::push(&head, crate::base::ids::ClassId::new(0));
        let one = || Target::new(ActorId(1), "one", None);
        let inside = before_wait(me, WaitOn::lock(&lock), one).unwrap();
        assert!(inside.in_graph(), "inside a handler the wait is recorded");
        assert!(REGISTRY.lock().waiter(me).is_some());
        drop(inside);
        assert!(REGISTRY.lock().waiter(me).is_none(), "and removed after");
        release(&[&lock]);
    }

    #[test]
    fn a_free_lock_closes_nothing_and_removal_forgets_the_waiter() {
        let free = Arc::new(ActorLock::new(false));
        let l2 = lock_held_by(B);
        let mut reg = Registry {
            waiting: vec![waiting(A, &l2, 2)],
        };
        assert!(!reg.closes_cycle(A, &WaitOn::lock(&free)));
        assert!(reg.waiter(A).is_some());
        reg.remove(A);
        assert!(reg.waiter(A).is_none());
        // Token 0 means "no owner" and never matches a waiter.
        assert!(reg.waiter(0).is_none());
        release(&[&l2]);
    }
}
