//! Reply routing. A handler returns its reply by value; where it goes is
//! decided here, never by the handler:
//!
//! * a synchronous delivery hands it straight back as the return value (it
//!   never builds a [`ReplyTo`] at all);
//! * `ask` parks it in a one-shot slot the [`Ask`] handle waits on;
//! * `request` enqueues it on the `reply_to` actor's mailbox as a message.
//!
//! Because the reply is the handler's return value, it is produced exactly
//! once per handled message: replying twice is not expressible.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::AskError;

/// Where the reply to a queued message goes. Built by the runtime, consumed
/// by the generated dispatch.
pub struct ReplyTo<R> {
    route: Route<R>,
}

enum Route<R> {
    Nobody,
    Ask(Arc<Slot<R>>),
    Actor(Arc<dyn ReplySink<R>>),
}

impl<R> fmt::Debug for ReplyTo<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.route {
            Route::Nobody => "ReplyTo::Nobody",
            Route::Ask(_) => "ReplyTo::Ask",
            Route::Actor(_) => "ReplyTo::Actor",
        })
    }
}

/// Something that accepts a reply as a message: an actor's mailbox.
pub(crate) trait ReplySink<R>: Send + Sync {
    fn deliver(&self, reply: R);
}

impl<R> ReplyTo<R> {
    /// The reply is discarded (`send`, `fast_send_void` fallback).
    #[inline]
    pub(crate) fn nobody() -> Self {
        ReplyTo {
            route: Route::Nobody,
        }
    }

    pub(crate) fn ask(slot: Arc<Slot<R>>) -> Self {
        ReplyTo {
            route: Route::Ask(slot),
        }
    }

    pub(crate) fn actor(sink: Arc<dyn ReplySink<R>>) -> Self {
        ReplyTo {
            route: Route::Actor(sink),
        }
    }

    /// Routes the handler's return value. Called by generated dispatch code.
    #[doc(hidden)]
    #[inline]
    pub fn deliver(mut self, reply: R) {
        match std::mem::replace(&mut self.route, Route::Nobody) {
            Route::Nobody => {}
            Route::Ask(slot) => slot.complete(Ok(reply)),
            Route::Actor(sink) => sink.deliver(reply),
        }
    }
}

impl<R> Drop for ReplyTo<R> {
    fn drop(&mut self) {
        if let Route::Ask(slot) = std::mem::replace(&mut self.route, Route::Nobody) {
            // Dropped without a reply: either the handler is unwinding, or
            // the message was dropped unhandled.
            let why = if std::thread::panicking() {
                AskError::Panicked
            } else {
                AskError::Dropped
            };
            slot.complete(Err(why));
        }
    }
}

/// The one-shot meeting point of an `ask` and its reply.
pub(crate) struct Slot<R> {
    state: Mutex<SlotState<R>>,
    ready: Condvar,
}

struct SlotState<R> {
    value: Option<Result<R, AskError>>,
    waker: Option<Waker>,
}

impl<R> Slot<R> {
    pub(crate) fn new() -> Self {
        Slot {
            state: Mutex::new(SlotState {
                value: None,
                waker: None,
            }),
            ready: Condvar::new(),
        }
    }

    fn complete(&self, value: Result<R, AskError>) {
        let waker = {
            let mut st = self.state.lock();
            st.value = Some(value);
            st.waker.take()
        };
        self.ready.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The pending reply of an [`Addr::ask`](crate::Addr::ask).
///
/// Wait for it from a plain thread with [`wait`](Ask::wait) or
/// [`wait_timeout`](Ask::wait_timeout), or `.await` it from any async
/// executor: `Ask` is a `Future` and needs no particular runtime.
#[must_use = "an Ask does nothing unless waited on; drop it to ignore the reply"]
pub struct Ask<R> {
    slot: Arc<Slot<R>>,
}

impl<R> fmt::Debug for Ask<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ask(..)")
    }
}

impl<R> Ask<R> {
    pub(crate) fn new(slot: Arc<Slot<R>>) -> Self {
        Ask { slot }
    }

    /// Blocks until the reply arrives.
    pub fn wait(self) -> Result<R, AskError> {
        let mut st = self.slot.state.lock();
        loop {
            if let Some(v) = st.value.take() {
                return v;
            }
            self.slot.ready.wait(&mut st);
        }
    }

    /// Blocks at most `timeout`. On [`AskError::Timeout`] the handle stays
    /// valid and can be waited on again.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<R, AskError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.slot.state.lock();
        loop {
            if let Some(v) = st.value.take() {
                return v;
            }
            if self.slot.ready.wait_until(&mut st, deadline).timed_out() {
                return st.value.take().unwrap_or(Err(AskError::Timeout));
            }
        }
    }

    /// The reply if it has arrived, without blocking.
    pub fn try_take(&mut self) -> Option<Result<R, AskError>> {
        self.slot.state.lock().value.take()
    }
}

impl<R> Future for Ask<R> {
    type Output = Result<R, AskError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut st = self.slot.state.lock();
        match st.value.take() {
            Some(v) => Poll::Ready(v),
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
