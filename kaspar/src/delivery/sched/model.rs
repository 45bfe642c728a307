//! Thin wrappers over the pool's internals for the loom models
//! (`tests/loom_sched_*.rs`), re-exported from `kaspar::__loom`: the models
//! drive the shipped code. Only built under `--cfg loom`.

use std::any::Any;
use std::sync::Arc;

use super::carried::Carried;
use super::idle::{Idle, Token};
use super::parked::Parked;
use crate::error::SendError;
use crate::mailbox::{Mailbox, MailboxKind, Polled, Schedule};

/// What a pooled consumer's drain found (`mailbox::Polled`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Poll {
    /// Messages taken.
    Got(usize),
    /// Idle now: the next push schedules the consumer.
    Idle,
    /// A push is under way: run again.
    Busy,
    /// Closed and drained.
    Closed,
}

fn poll_of(polled: Polled) -> Poll {
    match polled {
        Polled::Got(n) => Poll::Got(n),
        Polled::Idle => Poll::Idle,
        Polled::Busy => Poll::Busy,
        Polled::Closed => Poll::Closed,
    }
}

struct Hook(Box<dyn Fn() + Send + Sync>);

impl Schedule for Hook {
    fn schedule(&self) {
        (self.0)();
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A mailbox whose consumer is pooled: a push that finds it idle calls
/// `on_schedule` instead of waking a thread.
pub struct PooledMailbox<T>(Mailbox<T>);

impl<T> std::fmt::Debug for PooledMailbox<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PooledMailbox")
    }
}

impl<T> PooledMailbox<T> {
    /// A pooled mailbox of `kind`.
    pub fn new(kind: MailboxKind, on_schedule: impl Fn() + Send + Sync + 'static) -> Self {
        let mailbox = Mailbox::new(kind);
        if mailbox
            .set_task(Box::new(Hook(Box::new(on_schedule))))
            .is_err()
        {
            unreachable!("a new mailbox has no hook");
        }
        PooledMailbox(mailbox)
    }

    /// `Mailbox::push`.
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        self.0.push(msg)
    }

    /// `Mailbox::poll_batch`: the activation's drain.
    pub fn poll_batch(&self, out: &mut Vec<T>, max: usize) -> Poll {
        poll_of(self.0.poll_batch(out, max))
    }

    /// `Mailbox::poll`: the pooled actor's drain, a lone message as itself.
    pub fn poll(&self, out: &mut Vec<T>, max: usize) -> Result<T, Poll> {
        self.0.poll(out, max).map_err(poll_of)
    }

    /// `Mailbox::close`.
    pub fn close(&self) {
        self.0.close();
    }

    /// `Mailbox::inflate`: a compact queue's lane (`compact::lane`).
    pub fn inflate(&self) -> bool {
        self.0.inflate()
    }

    /// `Mailbox::inflate_into`: a stream's consumer inflating with up to
    /// `max` messages still queued, taken into `out`.
    pub fn inflate_into(&self, out: &mut Vec<T>, max: usize) -> Option<usize> {
        self.0.inflate_into(out, max)
    }
}

/// The pool's sleep protocol (`sched::idle`).
#[derive(Default)]
pub struct IdleModel(Idle);

impl std::fmt::Debug for IdleModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IdleModel")
    }
}

/// A pool thread's sleep token.
#[derive(Clone, Default)]
pub struct SleepToken(Arc<Token>);

impl std::fmt::Debug for SleepToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SleepToken")
    }
}

impl IdleModel {
    /// `Idle::start_searching`.
    pub fn start_searching(&self) {
        self.0.start_searching();
    }
    /// `Idle::found_work`.
    pub fn found_work(&self) {
        self.0.found_work();
    }
    /// `Idle::sleep`.
    pub fn sleep(&self, me: &SleepToken, has_work: impl Fn() -> bool) {
        let _waker_cpu = self.0.sleep(&me.0, has_work);
    }
    /// `Idle::notify_one`.
    pub fn notify_one(&self) {
        self.0.notify_one();
    }
}

/// What a pooled unit's activations carry (`sched::carried`).
pub struct Carry<T>(Carried<T>);

impl<T> std::fmt::Debug for Carry<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Carry")
    }
}

impl<T> Carry<T> {
    /// Carried state, no activation in.
    pub fn new(state: T) -> Self {
        Carry(Carried::new(state))
    }

    /// `Carried::enter`.
    ///
    /// # Safety
    ///
    /// As `Carried::enter`: the caller runs an activation the scheduling
    /// state machine started, so at most one other is still in.
    pub unsafe fn enter<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: the caller's, as above.
        unsafe { self.0.enter(f) }
    }
}

/// A pooled actor's parked hold on itself (`sched::parked`).
pub struct Park<T>(Parked<T>);

impl<T> std::fmt::Debug for Park<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Park")
    }
}

impl<T> Default for Park<T> {
    fn default() -> Self {
        Park(Parked::new())
    }
}

impl<T> Park<T> {
    /// `Parked::put`.
    ///
    /// # Safety
    ///
    /// As `Parked::put`: the caller owns the slot (its P1).
    pub unsafe fn put(&self, hold: Arc<T>) {
        // SAFETY: the caller's, as above.
        unsafe { self.0.put(hold) }
    }

    /// `Parked::take`.
    ///
    /// # Safety
    ///
    /// As `Parked::take`: the caller owns the slot (its P1).
    pub unsafe fn take(&self) -> Option<Arc<T>> {
        // SAFETY: the caller's, as above.
        unsafe { self.0.take() }
    }
}
