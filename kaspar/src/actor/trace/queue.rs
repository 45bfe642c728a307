//! What a queued message carries for tracing, and how a consuming loop
//! hands it to the handler run of that message.
//!
//! A [`Traced`] envelope is made where every queued delivery goes through
//! (`ActorCell::push` and `push_timer`), so `send`, `ask`, `request`, a
//! reply delivered as a message, a timer and a remote frame all capture
//! their cause in one place: the current `tracing` span (a handle, which
//! keeps its id from being reused) and the thread's [`TraceContext`].
//!
//! The loops that consume a queue pop envelopes through a [`Consumer`],
//! which hands the loop the bare messages (so everything downstream of the
//! pop, a group's generated dispatch included, sees the types it always
//! did) and puts their causes, in the same order, on this thread's
//! *arrivals*. Every message a loop serves goes through
//! `run_loop::serve_one` exactly once and in that order, whether its
//! handler runs or it goes to dead letters; [`arrive`] there takes the
//! next cause, and the span of the handler run (see `span::queued`) takes
//! it from there. Each pop replaces the arrivals, so a batch abandoned
//! half-served (an unwind) can never lend its causes to the next one.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::num::NonZeroU64;

use tracing::Span;

use super::context::{self, TraceContext, Via};
use super::span;
use crate::mailbox::{Drained, IdleWait, Mailbox};

/// Why a queued message exists: how it was delivered, and the span whose
/// handler (or whose code, outside any actor) sent it.
pub(crate) struct Cause {
    pub(super) via: Via,
    /// The sender's kaspar context: the parent of the handler run's span.
    context: Option<Packed>,
    /// The sender's current `tracing` span, held until the handler run's
    /// span has linked to it; `Span::none()` if there was none.
    pub(super) span: Span,
}

impl Cause {
    /// The cause of a message queued now, on this thread, by `via`
    /// (`Remote` instead while a frame from another process is delivered).
    #[inline]
    fn capture(via: Via) -> Cause {
        let now = context::current();
        Cause {
            via: if now.remote { Via::Remote } else { via },
            context: now.context.map(Packed::from),
            // The subscriber is asked only if it may want the link.
            span: if span::wanted() {
                Span::current()
            } else {
                Span::none()
            },
        }
    }
}

impl Cause {
    /// The sender's kaspar context.
    pub(super) fn context(&self) -> Option<TraceContext> {
        self.context.map(TraceContext::from)
    }
}

/// A [`TraceContext`] as an envelope carries it: 8-byte aligned (a `u128`
/// would align the whole envelope to 16) and with a niche in the span id,
/// which is never zero, so that `Option<Packed>` takes no more room: a
/// cause is 72 bytes, not 96.
#[derive(Clone, Copy)]
struct Packed {
    trace_id: [u64; 2],
    span_id: NonZeroU64,
}

impl From<TraceContext> for Packed {
    fn from(c: TraceContext) -> Self {
        Packed {
            trace_id: [c.trace_id as u64, (c.trace_id >> 64) as u64],
            // Never zero (`TraceContext` says so, and its makers keep it).
            span_id: NonZeroU64::new(c.span_id).unwrap_or(NonZeroU64::MAX),
        }
    }
}

impl From<Packed> for TraceContext {
    fn from(p: Packed) -> Self {
        TraceContext {
            trace_id: u128::from(p.trace_id[0]) | u128::from(p.trace_id[1]) << 64,
            span_id: p.span_id.get(),
        }
    }
}

/// A queued message with its cause.
pub(crate) struct Traced<M> {
    msg: M,
    cause: Cause,
}

impl<M> Traced<M> {
    /// `msg`, queued now by `via`.
    #[inline]
    pub(crate) fn new(msg: M, via: Via) -> Self {
        Traced {
            msg,
            cause: Cause::capture(via),
        }
    }

    /// The same cause with the message changed (a group member's message
    /// wrapped into the group's enum, or unwrapped again).
    #[inline]
    pub(crate) fn map<N>(self, f: impl FnOnce(M) -> N) -> Traced<N> {
        Traced {
            msg: f(self.msg),
            cause: self.cause,
        }
    }

    /// The message; its cause is dropped (a refused push, a dead letter).
    #[inline]
    pub(crate) fn into_msg(self) -> M {
        self.msg
    }
}

/// This thread's causes of the batch being served, in serving order, and
/// the cause of the message being served right now.
#[derive(Default)]
struct Arrivals {
    batch: VecDeque<Cause>,
    now: Option<Cause>,
}

thread_local! {
    static ARRIVALS: RefCell<Arrivals> = RefCell::new(Arrivals::default());
}

/// Runs `f` on this thread's arrivals; does nothing while the thread is
/// being torn down (a cause dropped then is dropped with the thread).
fn with_arrivals(f: impl FnOnce(&mut Arrivals)) {
    let _ = ARRIVALS.try_with(|a| f(&mut a.borrow_mut()));
}

/// The consuming end of a queue of [`Traced`] messages, with the methods
/// of [`Mailbox`] that the loops call: the messages go to the loop's
/// batch, their causes to this thread's arrivals.
pub(crate) struct Consumer<'a, M> {
    mailbox: &'a Mailbox<Traced<M>>,
    /// Reused for every pop: allocated once per consumer.
    popped: RefCell<Vec<Traced<M>>>,
}

/// The consuming end of `mailbox`, for the loop that serves it (see
/// `trace::consumer`).
pub(crate) fn consumer<M>(mailbox: &Mailbox<Traced<M>>) -> Consumer<'_, M> {
    Consumer {
        mailbox,
        popped: RefCell::new(Vec::new()),
    }
}

impl<M> Consumer<'_, M> {
    /// [`Mailbox::pop_batch`], the messages appended to `out`.
    pub(crate) fn pop_batch(&self, out: &mut Vec<M>, max: usize, idle: IdleWait) -> Drained {
        let popped = &mut *self.popped.borrow_mut();
        room(popped, max);
        let drained = self.mailbox.pop_batch(popped, max, idle);
        split(popped, out);
        drained
    }

    /// [`Mailbox::try_pop_batch`], the messages appended to `out`.
    pub(crate) fn try_pop_batch(&self, out: &mut Vec<M>, max: usize) -> usize {
        let popped = &mut *self.popped.borrow_mut();
        room(popped, max);
        let n = self.mailbox.try_pop_batch(popped, max);
        split(popped, out);
        n
    }

    /// `Mailbox::poll_batch` (a pooled consumer's drain), the messages
    /// appended to `out`.
    pub(crate) fn poll_batch(&self, out: &mut Vec<M>, max: usize) -> crate::mailbox::Polled {
        let popped = &mut *self.popped.borrow_mut();
        room(popped, max);
        let polled = self.mailbox.poll_batch(popped, max);
        split(popped, out);
        polled
    }

    /// `Mailbox::inflate_into`, the messages taken appended to `out`.
    pub(crate) fn inflate_into(&self, out: &mut Vec<M>, max: usize) -> Option<usize> {
        let popped = &mut *self.popped.borrow_mut();
        room(popped, max);
        let taken = self.mailbox.inflate_into(popped, max);
        split(popped, out);
        taken
    }

    /// `Mailbox::poll`: here always a batch, so that every message's
    /// cause goes through `split` as with `poll_batch`.
    pub(crate) fn poll(&self, out: &mut Vec<M>, max: usize) -> Result<M, crate::mailbox::Polled> {
        Err(self.poll_batch(out, max))
    }
}

/// The batch a loop serves is as big as `max` allows (up to 4096, the run
/// loops' own reserve): room for it here and in the arrivals once, so a
/// batch bigger than the ones before does not allocate in steady state.
fn room<M>(popped: &mut Vec<Traced<M>>, max: usize) {
    let want = max.min(4096);
    if popped.capacity() < want {
        popped.reserve(want);
        with_arrivals(|a| a.batch.reserve(want.saturating_sub(a.batch.len())));
    }
}

/// Moves the messages of `popped` to `out` and makes their causes this
/// thread's arrivals, in the same order.
fn split<M>(popped: &mut Vec<Traced<M>>, out: &mut Vec<M>) {
    out.reserve(popped.len());
    with_arrivals(|a| {
        a.batch.clear();
        for Traced { msg, cause } in popped.drain(..) {
            out.push(msg);
            a.batch.push_back(cause);
        }
    });
    // Left only if the thread is being torn down and the closure did not
    // run: the messages still go to the loop.
    out.extend(popped.drain(..).map(Traced::into_msg));
}

impl<M> Drop for Consumer<'_, M> {
    fn drop(&mut self) {
        // The loop is over (or unwinding): causes of messages it never
        // served are dropped here, not by the thread's destructors, where
        // a subscriber's own thread-locals may already be gone.
        with_arrivals(|a| *a = Arrivals::default());
    }
}

/// Proof that the message being served has taken its cause; dropping it
/// drops the cause if no handler run took it (a dead letter).
pub(crate) struct Arrival(());

impl Drop for Arrival {
    #[inline]
    fn drop(&mut self) {
        with_arrivals(|a| a.now = None);
    }
}

/// Takes the cause of the next message of the batch being served: the
/// handler run's span finds it ([`take_arrived`]) until the returned guard
/// is dropped. A message popped by no [`Consumer`] (none should be) has no
/// cause and starts a chain of its own.
#[inline]
pub(crate) fn arrive() -> Arrival {
    with_arrivals(|a| a.now = a.batch.pop_front());
    Arrival(())
}

/// The cause of the message being served, taken.
pub(super) fn take_arrived() -> Option<Cause> {
    let mut cause = None;
    with_arrivals(|a| cause = a.now.take());
    cause
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_packed_context_reads_back_as_it_was() {
        for c in [
            TraceContext {
                trace_id: 1,
                span_id: 1,
            },
            TraceContext {
                trace_id: u128::MAX,
                span_id: u64::MAX,
            },
            TraceContext {
                trace_id: 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210,
                span_id: 0x00ff_00ff_00ff_00ff,
            },
        ] {
            assert_eq!(TraceContext::from(Packed::from(c)), c);
        }
        assert_eq!(std::mem::size_of::<Option<Packed>>(), 24);
    }
}
