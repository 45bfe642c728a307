//! The per-thread call chain and the cycle check (paper §7.3).
//!
//! Every thread keeps, in thread-local storage, the stack of handlers it is
//! running: the run loop pushes the dequeued actor first, and every
//! synchronous delivery pushes its target on entry and pops it on exit (on
//! unwind too, through a guard). A synchronous delivery consults the chain
//! *before* it touches the target's lock; the check reads nothing but
//! thread-local state.
//!
//! The chain is also what keeps nested entry sound: an actor's state is
//! borrowed on a thread if and only if the actor is on that thread's chain.

use std::cell::{Cell, RefCell};
use std::fmt;

use crate::base::ids::{ActorId, ClassId};

/// Which repeats in the call chain count as a cycle.
///
/// Whatever the policy, an actor whose handlers take `&mut self` is never
/// entered twice on one thread: that would alias its state. The policy
/// decides only for `#[actor(reentrant)]` actors.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub enum CyclePolicy {
    /// The actor alone is the key: any re-entry is a cycle (paper §7.3.1).
    #[default]
    Conservative,
    /// The (actor, message class) pair is the key: `A/compute → B/validate →
    /// A/validated` passes, `A/foo → B/bar → A/foo` is refused (paper §7.3.2).
    ///
    /// Only `#[actor(reentrant)]` actors can be re-entered, so only they are
    /// affected. `#[actor(policy = permissive)]` without `reentrant` does
    /// not compile, and asking for it at spawn or per call on such an actor
    /// panics.
    Permissive,
}

/// The names an actor type's frames point to (one static per type).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FrameNames {
    pub(crate) actor: &'static str,
    pub(crate) classes: &'static [&'static str],
}

/// An actor as the frames on a chain name it: its id and its type's names.
/// One per actor, inside its cell; a frame on the chain points to it, so a
/// push writes one pointer and a class.
#[derive(Debug)]
pub(crate) struct FrameHead {
    pub(crate) actor: ActorId,
    pub(crate) names: &'static FrameNames,
}

/// One handler on a thread's call chain, as a snapshot shows it.
///
/// Small and `Copy` (three words).
#[derive(Clone, Copy)]
pub struct Frame {
    actor: ActorId,
    class: ClassId,
    names: &'static FrameNames,
}

impl PartialEq for Frame {
    fn eq(&self, other: &Self) -> bool {
        self.actor == other.actor && self.class == other.class
    }
}

impl Eq for Frame {}

impl Frame {
    #[cfg(test)]
    pub(crate) fn new(actor: ActorId, class: ClassId, names: &'static FrameNames) -> Self {
        Frame {
            actor,
            class,
            names,
        }
    }

    /// The actor running the handler.
    pub fn actor(&self) -> ActorId {
        self.actor
    }

    /// The handler's class.
    pub fn class(&self) -> ClassId {
        self.class
    }

    /// The actor's type name.
    pub fn actor_name(&self) -> &'static str {
        self.names.actor
    }

    /// The handler's message type name (`lifecycle` for the hooks).
    pub fn class_name(&self) -> &'static str {
        self.names
            .classes
            .get(self.class.index() as usize)
            .copied()
            .unwrap_or("lifecycle")
    }
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{:?}/{}",
            self.actor_name(),
            self.actor,
            self.class_name()
        )
    }
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A snapshot of a thread's call chain, outermost handler first.
///
/// Carried by [`FastSendError::Cycle`](crate::FastSendError::Cycle) and
/// [`FastSendError::Deadlock`](crate::FastSendError::Deadlock) so the
/// offending path can be read.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct CallChain {
    frames: Vec<Frame>,
}

impl CallChain {
    /// The frames, outermost first.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// How many handlers were on the chain.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether the chain was empty (the call came from outside any handler).
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

impl fmt::Debug for CallChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for CallChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.frames.is_empty() {
            return f.write_str("(empty)");
        }
        for (i, frame) in self.frames.iter().enumerate() {
            if i > 0 {
                f.write_str(" -> ")?;
            }
            write!(f, "{frame}")?;
        }
        Ok(())
    }
}

/// Frames kept in the thread-local array; deeper chains spill to a `Vec`.
const INLINE_FRAMES: usize = 32;

/// One frame of the inline chain: the actor's head and the class, a cell
/// each, so that a push is two plain stores straight into thread-local
/// storage.
struct FrameSlot {
    head: Cell<*const FrameHead>,
    class: Cell<ClassId>,
}

impl FrameSlot {
    const fn empty() -> FrameSlot {
        FrameSlot {
            head: Cell::new(std::ptr::null()),
            class: Cell::new(ClassId::LIFECYCLE),
        }
    }

    /// The frame this slot holds.
    ///
    /// # Safety
    ///
    /// The slot is below the chain's length: its head is inside the cell of
    /// an actor whose entry pushed it and has not ended, so it is alive.
    unsafe fn get(&self) -> Frame {
        // SAFETY: the caller's contract.
        let head = unsafe { &*self.head.get() };
        Frame {
            actor: head.actor,
            class: self.class.get(),
            names: head.names,
        }
    }
}

/// What the runtime keeps per thread. Nothing in it needs dropping, so the
/// thread-local is a plain, constant-initialised slot: reaching it costs no
/// lazy-initialisation check, and its address is fixed for the life of the
/// thread (which is what makes it this thread's token).
pub(crate) struct ThreadState {
    /// Frames on the chain.
    len: Cell<usize>,
    /// Run loops this thread is running (`ActorLock::consuming`): other
    /// threads may wait for it to handle a message.
    consuming: Cell<u32>,
    /// Prepared actors and groups this thread is pledged to start
    /// (`guard::lock::Pledge`): their queues wait for it too.
    pledged: Cell<u32>,
    /// Address of a group lock this thread holds right now and none of
    /// whose members has a flag set, or 0: set after the lock is acquired
    /// and restored before it is released ([`GroupMark`]), and cleared when
    /// a member gets a flag ([`forget_group`]). An entry into a member of
    /// that group is an intra-group call that needs no flags check.
    group: Cell<usize>,
    /// This thread's home id ([`ThreadState::home_id`]), or 0 until first
    /// asked for.
    home: Cell<u32>,
    /// The first `INLINE_FRAMES` frames, outermost first.
    frames: [FrameSlot; INLINE_FRAMES],
}

impl ThreadState {
    /// A thread's state before it runs anything: the initial value of
    /// every thread's slot.
    pub(crate) const fn new() -> ThreadState {
        ThreadState {
            len: Cell::new(0),
            consuming: Cell::new(0),
            pledged: Cell::new(0),
            group: Cell::new(0),
            home: Cell::new(0),
            frames: [const { FrameSlot::empty() }; INLINE_FRAMES],
        }
    }

    /// This thread's token (see [`thread_token`]).
    #[inline(always)]
    pub(crate) fn token(&self) -> usize {
        self as *const ThreadState as usize
    }

    /// This thread's home id: the number a thread-bound actor records as
    /// its home. Unlike the [token](Self::token), which is an address and
    /// can be reused by a thread started after this one has exited, a home
    /// id is never reused in the process: a thread that happens to get a
    /// dead thread's thread-local storage does not get its actors.
    ///
    /// 32 bits, so that a cell keeps it in padding: ids are handed out only
    /// to threads that become a thread-bound actor's home, one each, and
    /// after 2^32 - 2 of them in one process the next one to ask panics
    /// ([`assign_home_id`](Self::assign_home_id)) rather than reuse one.
    #[inline]
    pub(crate) fn home_id(&self) -> u32 {
        match self.home.get() {
            0 => self.assign_home_id(),
            id => id,
        }
    }

    /// Whether `home`, the home id a thread-bound actor recorded
    /// (`ActorCell::bind_home`), is this thread's: the check on entry. A
    /// thread that has no id yet is nobody's home (binding gives the home
    /// thread its id first), and an actor whose home is 0 has none: so the
    /// check gives no id out, and a thread that only tries to enter a
    /// thread-bound actor uses none up.
    #[inline(always)]
    pub(crate) fn is_home(&self, home: u32) -> bool {
        home != 0 && home == self.home.get()
    }

    #[cold]
    #[inline(never)]
    fn assign_home_id(&self) -> u32 {
        use std::sync::atomic::AtomicU32;
        // A plain counter, not a modelled atomic: it only hands out
        // distinct numbers, and orders nothing. It never wraps: a reused
        // id would let a second thread into a thread-bound state.
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let Some(id) = take_home_id(&NEXT) else {
            panic!(
                "kaspar: home ids exhausted: {} threads have been home to a \
                 thread-bound actor in this process, and an id is never reused",
                u32::MAX - 1
            );
        };
        self.home.set(id);
        id
    }

    /// Whether this thread holds the group lock at `lock` right now.
    #[inline(always)]
    pub(crate) fn holds_group<T>(&self, lock: &T) -> bool {
        self.group.get() == lock as *const T as usize
    }
}

/// The next home id from `next`, or `None` once they are all given out:
/// the counter stops at `u32::MAX`, never wraps to an id given before.
pub(crate) fn take_home_id(next: &std::sync::atomic::AtomicU32) -> Option<u32> {
    use std::sync::atomic::Ordering::Relaxed;
    next.fetch_update(Relaxed, Relaxed, |id| id.checked_add(1))
        .ok()
}

/// Marks the calling thread as holding a group's lock while it lives;
/// restores the previous mark when dropped. Made right after the lock is
/// acquired and dropped before it is released.
pub(crate) struct GroupMark {
    previous: usize,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl GroupMark {
    /// Marks the group lock at `lock`, which this thread has just
    /// acquired, if `clean` (no member has a flag set); otherwise leaves
    /// the mark as it is, and restores it all the same.
    pub(crate) fn set<T>(lock: &T, clean: bool) -> GroupMark {
        let t = this_thread();
        let previous = t.group.get();
        if clean {
            t.group.set(lock as *const T as usize);
        }
        GroupMark {
            previous,
            _not_send: std::marker::PhantomData,
        }
    }
}

/// Unmarks the group lock at `lock` if this thread marks it: one of its
/// members now has a flag set.
pub(crate) fn forget_group<T>(lock: &T) {
    let t = this_thread();
    if t.holds_group(lock) {
        t.group.set(0);
    }
}

impl Drop for GroupMark {
    fn drop(&mut self) {
        this_thread().group.set(self.previous);
    }
}

#[cfg(not(loom))]
thread_local! {
    static THREAD: ThreadState = const { ThreadState::new() };
    /// Frames past `INLINE_FRAMES` (a chain that deep is rare). Holds at
    /// least `len - INLINE_FRAMES` entries; a pop only lowers `len`, and
    /// the next push past the array drops what lies above it.
    static SPILL: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

// Under loom, one per loom thread (loom runs its threads on one OS thread,
// whose std thread-locals they would all share): each model thread has its
// own chain, token, group mark, run-loop count and home id, as each OS
// thread has, so the loom models run the runtime's per-thread code as is.
// Loom's thread-locals take no `const` initialiser.
#[cfg(loom)]
crate::base::sync::thread_local! {
    static THREAD: ThreadState = ThreadState::new();
    static SPILL: RefCell<Vec<Frame>> = RefCell::new(Vec::new());
}

/// This thread's state, reached with one thread-local address computation.
///
/// `LocalKey::with` takes a closure; with the whole entry protocol inside
/// it, the compiler stopped inlining `with` and every call paid an indirect
/// call through the key's accessor (callgrind: 36 instructions of the 102
/// a `fast_send` cost). Taking the address alone keeps `with` trivial, so
/// it inlines to a thread-pointer-relative address.
#[inline(always)]
pub(crate) fn this_thread() -> &'static ThreadState {
    let state = THREAD.with(|t| t as *const ThreadState);
    // SAFETY: `THREAD` is const-initialised and `ThreadState` needs no drop,
    // so std registers no destructor for it: its storage is part of the
    // thread's static TLS block, initialised before any code of the thread
    // runs and freed only when the thread is gone. Every use of the returned
    // reference runs on this thread (`ThreadState` is `!Sync`, so the
    // reference is `!Send` and cannot be handed to another thread), hence
    // while the storage is live. The `'static` is "for as long as any code
    // of this thread can observe it". (Under loom, the slot is loom's, boxed
    // for one loom thread and dropped when that thread's closure has
    // returned: again, when none of its code can observe it.)
    unsafe { &*state }
}

/// Marks the start (`true`) or end (`false`) of a run loop on this thread.
pub(crate) fn set_consuming(on: bool) {
    let c = &this_thread().consuming;
    c.set(if on { c.get() + 1 } else { c.get() - 1 });
}

/// Marks the start (`true`) or end (`false`) of a pledge to start a
/// prepared actor or group (`guard::lock::Pledge`) on this thread.
pub(crate) fn set_pledged(on: bool) {
    let c = &this_thread().pledged;
    c.set(if on { c.get() + 1 } else { c.get() - 1 });
}

/// Whether another thread can be waiting for this one: it is running a
/// handler (so it holds that actor's lock, or its group's) or a run loop
/// (so asks to its actors and sends waiting for room depend on it), or it
/// is pledged to start a prepared actor (whose queue waits for it). A
/// thread that is none of these holds nothing anyone waits for, so a wait
/// of its own can never close a cycle.
#[inline]
pub(crate) fn may_be_waited_for() -> bool {
    let t = this_thread();
    t.len.get() != 0 || t.consuming.get() != 0 || t.pledged.get() != 0
}

/// Whether this thread is running actor code right now: a handler or a
/// hook (a frame on the chain), or a run loop. Such a thread must not
/// wait for actors to finish (`System::shutdown`): one of them may need a
/// lock it holds, or be the very loop it runs.
pub(crate) fn runs_actor_code() -> bool {
    let t = this_thread();
    t.len.get() != 0 || t.consuming.get() != 0
}

/// This thread's token: the address of its chain, nonzero and distinct
/// from every other live thread's. It names the thread in lock owner words
/// and in the wait-for registry. A token is reused only after its thread
/// has exited, and an exited thread holds no lock and waits for nothing.
#[inline(always)]
pub(crate) fn thread_token() -> usize {
    this_thread() as *const ThreadState as usize
}

/// Pushes (`head`, `class`) as frame number `len`.
///
/// The head must outlive the frame: the entry that pushes it borrows the
/// cell that holds the head until it pops the frame.
#[inline(always)]
fn push_in(t: &ThreadState, len: usize, head: &FrameHead, class: ClassId) {
    if len < INLINE_FRAMES {
        t.frames[len].head.set(head);
        t.frames[len].class.set(class);
    } else {
        spill_push(len - INLINE_FRAMES, head, class);
    }
    t.len.set(len + 1);
}

fn frames_of(t: &ThreadState) -> Vec<Frame> {
    let len = t.len.get();
    let mut out: Vec<Frame> = t.frames[..len.min(INLINE_FRAMES)]
        .iter()
        // SAFETY: every slot below `len` holds a live frame (`push_in`).
        .map(|slot| unsafe { slot.get() })
        .collect();
    if len > INLINE_FRAMES {
        SPILL.with(|s| out.extend_from_slice(&s.borrow()[..len - INLINE_FRAMES]));
    }
    out
}

/// [`enter_on`] for the calling thread, returning its token too (tests).
#[cfg(test)]
pub(crate) fn enter(
    head: &FrameHead,
    class: ClassId,
    reentrant: bool,
    policy: CyclePolicy,
) -> Result<(usize, ChainGuard), CallChain> {
    let t = this_thread();
    enter_on(t, head, class, reentrant, policy).map(|guard| (t.token(), guard))
}

/// The cycle check and the frame push in one visit to thread-local storage
/// (inlined into each delivery, so the frame is written in place), on this
/// thread's state `t`, already reached by the caller: on success the guard
/// that pops the frame.
///
/// `reentrant` is whether the target's handlers take `&self`. Returns the
/// chain snapshot (without the new frame) when the entry is refused.
#[inline(always)]
pub(crate) fn enter_on(
    t: &ThreadState,
    head: &FrameHead,
    class: ClassId,
    reentrant: bool,
    policy: CyclePolicy,
) -> Result<ChainGuard, CallChain> {
    let by_pair = reentrant && policy == CyclePolicy::Permissive;
    // The rare paths (a deep chain, a refusal) are out of line.
    let len = t.len.get();
    if len != 0 && on_chain(t, len, head, class, by_pair) {
        return Err(snapshot());
    }
    push_in(t, len, head, class);
    Ok(ChainGuard {
        _not_send: std::marker::PhantomData,
    })
}

/// Whether the key (the actor of `head`, and `class` if `by_pair`) is
/// already on the chain of `len` frames. In the inline part an actor is
/// its head's address: unique among live actors, and every actor on the
/// chain is alive.
#[inline(always)]
fn on_chain(t: &ThreadState, len: usize, head: &FrameHead, class: ClassId, by_pair: bool) -> bool {
    let key: *const FrameHead = head;
    t.frames[..len.min(INLINE_FRAMES)]
        .iter()
        .any(|slot| slot.head.get() == key && (!by_pair || slot.class.get() == class))
        || (len > INLINE_FRAMES && spill_hit(len - INLINE_FRAMES, head.actor, class, by_pair))
}

#[cold]
#[inline(never)]
fn spill_hit(live: usize, actor: ActorId, class: ClassId, by_pair: bool) -> bool {
    SPILL.with(|s| {
        s.borrow()[..live]
            .iter()
            .any(|f| f.actor == actor && (!by_pair || f.class == class))
    })
}

/// Pushes (`head`, `class`) as spilled frame number `at`, dropping stale
/// frames that earlier pops left above it. A spilled frame is stored
/// resolved (id and names), so it never points into a cell.
#[cold]
#[inline(never)]
fn spill_push(at: usize, head: &FrameHead, class: ClassId) {
    SPILL.with(|s| {
        let mut s = s.borrow_mut();
        s.truncate(at);
        s.push(Frame {
            actor: head.actor,
            class,
            names: head.names,
        });
    });
}

/// A copy of this thread's chain.
#[cold]
pub(crate) fn snapshot() -> CallChain {
    CallChain {
        frames: frames_of(this_thread()),
    }
}

/// Pushes a frame; the returned guard pops it on drop (also on unwind).
/// `head` must outlive the guard (see `push_in`).
#[inline]
pub(crate) fn push(head: &FrameHead, class: ClassId) -> ChainGuard {
    let t = this_thread();
    push_in(t, t.len.get(), head, class);
    ChainGuard {
        _not_send: std::marker::PhantomData,
    }
}

/// Names `class` in the frame on top of this thread's chain, which the
/// caller pushed and still holds (its handlers' own frames are popped):
/// an entry that serves one queued message after another
/// ([`Entered::next_message`](crate::actor::cell::Entered::next_message)).
#[inline(always)]
pub(crate) fn retag_top(class: ClassId) {
    let t = this_thread();
    let top = t.len.get() - 1;
    if top < INLINE_FRAMES {
        t.frames[top].class.set(class);
    } else {
        spill_retag(top - INLINE_FRAMES, class);
    }
}

#[cold]
#[inline(never)]
fn spill_retag(at: usize, class: ClassId) {
    SPILL.with(|s| s.borrow_mut()[at].class = class);
}

/// Pops the frame pushed by [`push`] or [`enter_on`] when dropped.
pub(crate) struct ChainGuard {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for ChainGuard {
    #[inline(always)]
    fn drop(&mut self) {
        // A spilled frame stays in `SPILL` until the next spilling push
        // overwrites it: popping is one decrement.
        let t = this_thread();
        t.len.set(t.len.get() - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NAMES: FrameNames = FrameNames {
        actor: "T",
        classes: &["M", "M", "M", "M", "M", "M"],
    };

    fn head(actor: u64) -> FrameHead {
        FrameHead {
            actor: ActorId(actor),
            names: &NAMES,
        }
    }

    fn frame(actor: u64, class: u16) -> Frame {
        Frame::new(ActorId(actor), ClassId::new(class), &NAMES)
    }

    /// A test's actors: one head per id, so the same id is the same actor.
    /// Boxed, so a head keeps its address while the map grows; declared
    /// before the guards of a test, so it outlives the frames that point
    /// into it.
    struct Actors(std::collections::HashMap<u64, Box<FrameHead>>);

    impl Actors {
        fn new() -> Self {
            Actors(Default::default())
        }
        fn get(&mut self, actor: u64) -> &FrameHead {
            self.0.entry(actor).or_insert_with(|| Box::new(head(actor)))
        }
        fn push(&mut self, actor: u64, class: u16) -> ChainGuard {
            push(self.get(actor), ClassId::new(class))
        }
        fn admits(&mut self, actor: u64, class: u16, reentrant: bool, policy: CyclePolicy) -> bool {
            enter(self.get(actor), ClassId::new(class), reentrant, policy).is_ok()
        }
    }

    #[test]
    fn conservative_keys_on_actor() {
        let mut x = Actors::new();
        let _a = x.push(1, 0);
        let _b = x.push(2, 0);
        assert!(!x.admits(1, 5, true, CyclePolicy::Conservative));
        assert!(x.admits(3, 0, true, CyclePolicy::Conservative));
        assert_eq!(snapshot().len(), 2, "an admitted entry pops on drop");
    }

    #[test]
    fn permissive_keys_on_pair_only_for_reentrant() {
        let mut x = Actors::new();
        let _a = x.push(1, 0);
        let _b = x.push(2, 1);
        assert!(x.admits(1, 2, true, CyclePolicy::Permissive));
        assert!(!x.admits(1, 0, true, CyclePolicy::Permissive));
        // a `&mut self` actor is never re-entered, whatever the policy
        assert!(!x.admits(1, 2, false, CyclePolicy::Permissive));
    }

    #[test]
    fn a_refusal_reports_the_chain_without_the_target() {
        let mut x = Actors::new();
        let _a = x.push(1, 0);
        let Err(chain) = enter(x.get(1), ClassId::new(0), false, CyclePolicy::Conservative) else {
            panic!("re-entry admitted")
        };
        assert_eq!(chain.frames(), &[frame(1, 0)]);
    }

    #[test]
    fn guard_pops_on_unwind() {
        let r = std::panic::catch_unwind(|| {
            let seven = head(7);
            let _g = push(&seven, ClassId::new(0));
            panic!("boom");
        });
        assert!(r.is_err());
        assert!(snapshot().is_empty());
    }

    #[test]
    fn deep_chains_spill_and_still_detect_cycles() {
        let mut x = Actors::new();
        let guards: Vec<_> = (0..INLINE_FRAMES as u64 + 10)
            .map(|i| x.push(100 + i, 0))
            .collect();
        assert_eq!(snapshot().len(), INLINE_FRAMES + 10);
        // an actor in the spilled part and one in the inline part
        assert!(!x.admits(
            100 + INLINE_FRAMES as u64 + 5,
            0,
            false,
            CyclePolicy::Conservative
        ));
        assert!(!x.admits(101, 0, false, CyclePolicy::Conservative));
        assert!(x.admits(7, 0, false, CyclePolicy::Conservative));
        drop(guards);
        assert!(snapshot().is_empty());
    }

    #[test]
    fn snapshot_displays_outermost_first() {
        let mut x = Actors::new();
        let _a = x.push(1, 0);
        let _b = x.push(2, 1);
        assert_eq!(snapshot().to_string(), "T#1/M -> T#2/M");
    }
}
