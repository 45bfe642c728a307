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

/// One handler on a thread's call chain.
///
/// Small and `Copy` (three words): the chain check scans these, and every
/// synchronous delivery pushes one.
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
    #[inline(always)]
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

const NO_NAMES: &FrameNames = &FrameNames {
    actor: "",
    classes: &[],
};

/// One frame of the inline chain, a cell per field: a push is three plain
/// stores straight into thread-local storage, with no frame built on the
/// stack first and copied.
struct FrameSlot {
    actor: Cell<ActorId>,
    class: Cell<ClassId>,
    names: Cell<&'static FrameNames>,
}

impl FrameSlot {
    const fn empty() -> FrameSlot {
        FrameSlot {
            actor: Cell::new(ActorId(0)),
            class: Cell::new(ClassId::LIFECYCLE),
            names: Cell::new(NO_NAMES),
        }
    }

    #[inline(always)]
    fn get(&self) -> Frame {
        Frame {
            actor: self.actor.get(),
            class: self.class.get(),
            names: self.names.get(),
        }
    }

    #[inline(always)]
    fn set(&self, actor: ActorId, class: ClassId, names: &'static FrameNames) {
        self.actor.set(actor);
        self.class.set(class);
        self.names.set(names);
    }
}

/// What the runtime keeps per thread. Nothing in it needs dropping, so the
/// thread-local is a plain, constant-initialised slot: reaching it costs no
/// lazy-initialisation check, and its address is fixed for the life of the
/// thread (which is what makes it this thread's token).
struct ThreadState {
    /// Frames on the chain.
    len: Cell<usize>,
    /// Run loops this thread is running (`ActorLock::consuming`): other
    /// threads may wait for it to handle a message.
    consuming: Cell<u32>,
    /// The first `INLINE_FRAMES` frames, outermost first.
    frames: [FrameSlot; INLINE_FRAMES],
}

thread_local! {
    static THREAD: ThreadState = const {
        ThreadState {
            len: Cell::new(0),
            consuming: Cell::new(0),
            frames: [const { FrameSlot::empty() }; INLINE_FRAMES],
        }
    };
    /// Frames past `INLINE_FRAMES` (a chain that deep is rare). Holds at
    /// least `len - INLINE_FRAMES` entries; a pop only lowers `len`, and
    /// the next push past the array drops what lies above it.
    static SPILL: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// This thread's state, reached with one thread-local address computation.
///
/// `LocalKey::with` takes a closure; with the whole entry protocol inside
/// it, the compiler stopped inlining `with` and every call paid an indirect
/// call through the key's accessor (callgrind: 36 instructions of the 102
/// a `fast_send` cost). Taking the address alone keeps `with` trivial, so
/// it inlines to a thread-pointer-relative address.
#[inline(always)]
fn this_thread() -> &'static ThreadState {
    let state = THREAD.with(|t| t as *const ThreadState);
    // SAFETY: `THREAD` is const-initialised and `ThreadState` needs no drop,
    // so std registers no destructor for it: its storage is part of the
    // thread's static TLS block, initialised before any code of the thread
    // runs and freed only when the thread is gone. Every use of the returned
    // reference runs on this thread (`ThreadState` is `!Sync`, so the
    // reference is `!Send` and cannot be handed to another thread), hence
    // while the storage is live. The `'static` is "for as long as any code
    // of this thread can observe it".
    unsafe { &*state }
}

/// Marks the start (`true`) or end (`false`) of a run loop on this thread.
pub(crate) fn set_consuming(on: bool) {
    let c = &this_thread().consuming;
    c.set(if on { c.get() + 1 } else { c.get() - 1 });
}

/// Whether another thread can be waiting for this one: it is running a
/// handler (so it holds that actor's lock, or its group's) or a run loop
/// (so asks to its actors and sends waiting for room depend on it). A
/// thread that is neither holds nothing anyone waits for, so a wait of
/// its own can never close a cycle.
#[inline]
pub(crate) fn may_be_waited_for() -> bool {
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

#[inline(always)]
fn push_in(t: &ThreadState, len: usize, frame: Frame) {
    // Field by field, so the compiler writes the frame straight into the
    // slot instead of building it on the stack and copying it.
    if len < INLINE_FRAMES {
        t.frames[len].set(frame.actor, frame.class, frame.names);
    } else {
        spill_push(len - INLINE_FRAMES, frame.actor, frame.class, frame.names);
    }
    t.len.set(len + 1);
}

fn frames_of(t: &ThreadState) -> Vec<Frame> {
    let len = t.len.get();
    let mut out: Vec<Frame> = t.frames[..len.min(INLINE_FRAMES)]
        .iter()
        .map(FrameSlot::get)
        .collect();
    if len > INLINE_FRAMES {
        SPILL.with(|s| out.extend_from_slice(&s.borrow()[..len - INLINE_FRAMES]));
    }
    out
}

/// The cycle check and the frame push in one visit to thread-local storage
/// (inlined into each delivery so the frame is written in place): on
/// success returns this thread's token and the guard that pops the frame.
///
/// `reentrant` is whether the target's handlers take `&self`. Returns the
/// chain snapshot (without the new frame) when the entry is refused.
#[inline(always)]
pub(crate) fn enter(
    frame: Frame,
    reentrant: bool,
    policy: CyclePolicy,
) -> Result<(usize, ChainGuard), CallChain> {
    let by_pair = reentrant && policy == CyclePolicy::Permissive;
    // The rare paths (a deep chain, a refusal) are out of line.
    let t = this_thread();
    let len = t.len.get();
    if len != 0 && on_chain(t, len, frame.actor, frame.class, by_pair) {
        return Err(snapshot());
    }
    push_in(t, len, frame);
    Ok((
        t as *const ThreadState as usize,
        ChainGuard {
            _not_send: std::marker::PhantomData,
        },
    ))
}

/// Whether the key (`actor`, and `class` if `by_pair`) is already on the
/// chain of `len` frames.
#[inline(always)]
fn on_chain(t: &ThreadState, len: usize, actor: ActorId, class: ClassId, by_pair: bool) -> bool {
    let hit = |f: &Frame| f.actor == actor && (!by_pair || f.class == class);
    t.frames[..len.min(INLINE_FRAMES)]
        .iter()
        .any(|slot| slot.actor.get() == actor && (!by_pair || slot.class.get() == class))
        || (len > INLINE_FRAMES && spill_hit(len - INLINE_FRAMES, &hit))
}

#[cold]
#[inline(never)]
fn spill_hit(live: usize, hit: &dyn Fn(&Frame) -> bool) -> bool {
    SPILL.with(|s| s.borrow()[..live].iter().any(hit))
}

/// Pushes `frame` as spilled frame number `at`, dropping stale frames that
/// earlier pops left above it.
///
/// Takes the frame's fields, not a `Frame`: a by-value `Frame` argument
/// would make every caller build the frame in memory for this cold call.
#[cold]
#[inline(never)]
fn spill_push(at: usize, actor: ActorId, class: ClassId, names: &'static FrameNames) {
    SPILL.with(|s| {
        let mut s = s.borrow_mut();
        s.truncate(at);
        s.push(Frame {
            actor,
            class,
            names,
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
#[inline]
pub(crate) fn push(frame: Frame) -> ChainGuard {
    let t = this_thread();
    push_in(t, t.len.get(), frame);
    ChainGuard {
        _not_send: std::marker::PhantomData,
    }
}

/// Pops the frame pushed by [`push`] or [`enter`] when dropped.
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

    fn frame(actor: u64, class: u16) -> Frame {
        Frame::new(ActorId(actor), ClassId::new(class), &NAMES)
    }

    fn admits(actor: u64, class: u16, reentrant: bool, policy: CyclePolicy) -> bool {
        enter(frame(actor, class), reentrant, policy).is_ok()
    }

    #[test]
    fn conservative_keys_on_actor() {
        let _a = push(frame(1, 0));
        let _b = push(frame(2, 0));
        assert!(!admits(1, 5, true, CyclePolicy::Conservative));
        assert!(admits(3, 0, true, CyclePolicy::Conservative));
        assert_eq!(snapshot().len(), 2, "an admitted entry pops on drop");
    }

    #[test]
    fn permissive_keys_on_pair_only_for_reentrant() {
        let _a = push(frame(1, 0));
        let _b = push(frame(2, 1));
        assert!(admits(1, 2, true, CyclePolicy::Permissive));
        assert!(!admits(1, 0, true, CyclePolicy::Permissive));
        // a `&mut self` actor is never re-entered, whatever the policy
        assert!(!admits(1, 2, false, CyclePolicy::Permissive));
    }

    #[test]
    fn a_refusal_reports_the_chain_without_the_target() {
        let _a = push(frame(1, 0));
        let Err(chain) = enter(frame(1, 0), false, CyclePolicy::Conservative) else {
            panic!("re-entry admitted")
        };
        assert_eq!(chain.frames(), &[frame(1, 0)]);
    }

    #[test]
    fn guard_pops_on_unwind() {
        let r = std::panic::catch_unwind(|| {
            let _g = push(frame(7, 0));
            panic!("boom");
        });
        assert!(r.is_err());
        assert!(snapshot().is_empty());
    }

    #[test]
    fn deep_chains_spill_and_still_detect_cycles() {
        let guards: Vec<_> = (0..INLINE_FRAMES as u64 + 10)
            .map(|i| push(frame(100 + i, 0)))
            .collect();
        assert_eq!(snapshot().len(), INLINE_FRAMES + 10);
        // an actor in the spilled part and one in the inline part
        assert!(!admits(
            100 + INLINE_FRAMES as u64 + 5,
            0,
            false,
            CyclePolicy::Conservative
        ));
        assert!(!admits(101, 0, false, CyclePolicy::Conservative));
        assert!(admits(7, 0, false, CyclePolicy::Conservative));
        drop(guards);
        assert!(snapshot().is_empty());
    }

    #[test]
    fn snapshot_displays_outermost_first() {
        let _a = push(frame(1, 0));
        let _b = push(frame(2, 1));
        assert_eq!(snapshot().to_string(), "T#1/M -> T#2/M");
    }
}
