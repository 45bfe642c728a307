//! `ask`'s side of reply routing: the one-shot [`Slot`] a reply is parked
//! in, the per-thread cache that recycles answered slots, and the [`Ask`]
//! handle that waits on one (blocking or as a `Future`).

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::error::AskError;

/// The one-shot meeting point of an `ask` and its reply.
pub(crate) struct Slot<R> {
    state: Mutex<SlotState<R>>,
}

struct SlotState<R> {
    value: Option<Result<R, AskError>>,
    /// A thread blocked in `wait`/`wait_timeout`.
    thread: Option<Thread>,
    /// A task awaiting the `Ask` as a future.
    waker: Option<Waker>,
}

impl<R> Slot<R> {
    pub(crate) fn new() -> Self {
        Slot {
            state: Mutex::new(SlotState {
                value: None,
                thread: None,
                waker: None,
            }),
        }
    }

    /// Stores the value, lets go of the replier's reference, *then* wakes
    /// the asker: by the time the asker runs, its handle is the slot's only
    /// owner and the slot can be recycled.
    pub(super) fn complete(this: Arc<Self>, value: Result<R, AskError>) {
        let (thread, waker) = {
            let mut st = this.state.lock();
            st.value = Some(value);
            (st.thread.take(), st.waker.take())
        };
        drop(this);
        if let Some(t) = thread {
            t.unpark();
        }
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// Slots per reply type that a thread keeps for reuse.
const SLOT_CACHE: usize = 32;

type SlotCache = HashMap<TypeId, Vec<Arc<dyn Any + Send + Sync>>>;

thread_local! {
    /// Answered `ask` slots, kept by the thread that asked, so that in
    /// steady state an `ask` draws a slot from here rather than allocating.
    static SLOTS: RefCell<SlotCache> = RefCell::new(HashMap::new());
}

/// A fresh or recycled one-shot slot for a reply of type `R`.
pub(crate) fn slot<R: Send + 'static>() -> Arc<Slot<R>> {
    let cached = SLOTS
        .try_with(|cache| {
            cache
                .borrow_mut()
                .get_mut(&TypeId::of::<R>())
                .and_then(Vec::pop)
        })
        .ok()
        .flatten()
        .and_then(|any| any.downcast::<Slot<R>>().ok());
    cached.unwrap_or_else(|| Arc::new(Slot::new()))
}

/// The pending reply of an [`Addr::ask`](crate::Addr::ask).
///
/// Wait for it from a plain thread with [`wait`](Ask::wait) or
/// [`wait_timeout`](Ask::wait_timeout), or `.await` it from any async
/// executor: `Ask` is a `Future` and needs no particular runtime.
///
/// After the reply has been taken, dropping the handle (which `wait` does)
/// returns its slot to a per-thread cache: an `ask` in steady state costs no
/// system allocation.
#[must_use = "an Ask does nothing unless waited on; drop it to ignore the reply"]
pub struct Ask<R: Send + 'static> {
    /// `None` only while being dropped.
    slot: Option<Arc<Slot<R>>>,
    /// The reply (or its error) was taken: the replier is done with the
    /// slot or about to be.
    answered: bool,
}

impl<R: Send + 'static> Drop for Ask<R> {
    fn drop(&mut self) {
        // Unique only once the replier has let go of the slot (its
        // `ReplyTo` was consumed or dropped); `get_mut` synchronises with
        // that release, so the slot can be reset and reused.
        let Some(mut slot) = self.slot.take() else {
            return;
        };
        if !self.answered {
            // Unanswered: the replier may hold the slot indefinitely.
            return;
        }
        // Answered: the replier drops its reference right after storing
        // the value (`Slot::complete`); wait out that short window.
        let mut tries = 0;
        while Arc::strong_count(&slot) > 1 && tries < 10_000 {
            tries += 1;
            thread::yield_now();
        }
        let Some(unique) = Arc::get_mut(&mut slot) else {
            return;
        };
        let st = unique.state.get_mut();
        st.value = None;
        st.waker = None;
        st.thread = None;
        let slot: Arc<dyn Any + Send + Sync> = slot;
        let _ = SLOTS.try_with(|cache| {
            let mut cache = cache.borrow_mut();
            let list = cache.entry(TypeId::of::<R>()).or_default();
            if list.len() < SLOT_CACHE {
                list.push(slot);
            }
        });
    }
}

impl<R: Send + 'static> fmt::Debug for Ask<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ask(..)")
    }
}

impl<R: Send + 'static> Ask<R> {
    pub(crate) fn new(slot: Arc<Slot<R>>) -> Self {
        Ask {
            slot: Some(slot),
            answered: false,
        }
    }

    fn slot(&self) -> &Slot<R> {
        self.slot.as_deref().expect("present until drop")
    }

    /// Blocks until the reply arrives.
    pub fn wait(mut self) -> Result<R, AskError> {
        loop {
            if let Some(v) = self.take_or_register() {
                return v;
            }
            thread::park();
        }
    }

    /// The value if it is there (marking the handle answered); otherwise
    /// registers this thread to be unparked when it arrives.
    fn take_or_register(&mut self) -> Option<Result<R, AskError>> {
        let mut st = self.slot().state.lock();
        match st.value.take() {
            Some(v) => {
                st.thread = None;
                drop(st);
                self.answered = true;
                Some(v)
            }
            None => {
                st.thread = Some(thread::current());
                None
            }
        }
    }

    /// Blocks at most `timeout`. On [`AskError::Timeout`] the handle stays
    /// valid and can be waited on again.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<R, AskError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(v) = self.take_or_register() {
                return v;
            }
            let now = Instant::now();
            if now >= deadline {
                self.slot().state.lock().thread = None;
                return self.take_or_register().unwrap_or(Err(AskError::Timeout));
            }
            thread::park_timeout(deadline - now);
        }
    }

    /// The reply if it has arrived, without blocking.
    pub fn try_take(&mut self) -> Option<Result<R, AskError>> {
        let v = self.slot().state.lock().value.take();
        self.answered |= v.is_some();
        v
    }
}

impl<R: Send + 'static> Future for Ask<R> {
    type Output = Result<R, AskError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut st = this.slot().state.lock();
        match st.value.take() {
            Some(v) => {
                drop(st);
                this.answered = true;
                Poll::Ready(v)
            }
            None => {
                match &mut st.waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    w => *w = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}
