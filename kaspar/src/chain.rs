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

use crate::actor::{ActorId, ClassId};

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
    Permissive,
}

/// One handler on a thread's call chain.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// The actor running the handler.
    pub actor: ActorId,
    /// The actor's type name.
    pub actor_name: &'static str,
    /// The handler's class.
    pub class: ClassId,
    /// The handler's message type name.
    pub class_name: &'static str,
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:?}/{}", self.actor_name, self.actor, self.class_name)
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

/// What the runtime keeps per thread.
struct ThreadState {
    /// Nonzero token naming this thread in lock owner fields and the
    /// wait-for registry; assigned on first use.
    token: Cell<usize>,
    chain: RefCell<Vec<Frame>>,
}

thread_local! {
    static THREAD: ThreadState = const {
        ThreadState { token: Cell::new(0), chain: RefCell::new(Vec::new()) }
    };
}

/// This thread's token (nonzero).
#[inline]
pub(crate) fn thread_token() -> usize {
    THREAD.with(|t| {
        let tok = t.token.get();
        if tok != 0 {
            tok
        } else {
            assign_token(t)
        }
    })
}

#[cold]
fn assign_token(t: &ThreadState) -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let tok = NEXT.fetch_add(1, Ordering::Relaxed);
    t.token.set(tok);
    tok
}

/// The cycle check and the frame push in one visit to thread-local storage:
/// on success returns this thread's token and the guard that pops `frame`.
///
/// `reentrant` is whether the target's handlers take `&self`. Returns the
/// chain snapshot (without `frame`) when the entry is refused.
#[inline]
pub(crate) fn enter(
    frame: Frame,
    reentrant: bool,
    policy: CyclePolicy,
) -> Result<(usize, ChainGuard), CallChain> {
    THREAD.with(|t| {
        let mut chain = t.chain.borrow_mut();
        let by_pair = reentrant && policy == CyclePolicy::Permissive;
        if chain
            .iter()
            .any(|f| f.actor == frame.actor && (!by_pair || f.class == frame.class))
        {
            return Err(CallChain {
                frames: chain.clone(),
            });
        }
        chain.push(frame);
        let tok = t.token.get();
        let tok = if tok != 0 { tok } else { assign_token(t) };
        Ok((
            tok,
            ChainGuard {
                _not_send: std::marker::PhantomData,
            },
        ))
    })
}

/// A copy of this thread's chain.
#[cold]
pub(crate) fn snapshot() -> CallChain {
    THREAD.with(|t| CallChain {
        frames: t.chain.borrow().clone(),
    })
}

/// Pushes a frame; the returned guard pops it on drop (also on unwind).
#[inline]
pub(crate) fn push(frame: Frame) -> ChainGuard {
    THREAD.with(|t| t.chain.borrow_mut().push(frame));
    ChainGuard {
        _not_send: std::marker::PhantomData,
    }
}

/// Pops the frame pushed by [`push`] when dropped.
pub(crate) struct ChainGuard {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for ChainGuard {
    #[inline]
    fn drop(&mut self) {
        // `try_with`: during thread teardown the chain may already be gone.
        let _ = THREAD.try_with(|t| t.chain.borrow_mut().pop());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(actor: u64, class: u16) -> Frame {
        Frame {
            actor: ActorId(actor),
            actor_name: "T",
            class: ClassId::new(class),
            class_name: "M",
        }
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
    fn snapshot_displays_outermost_first() {
        let _a = push(frame(1, 0));
        let _b = push(frame(2, 1));
        assert_eq!(snapshot().to_string(), "T#1/M -> T#2/M");
    }
}
