//! The planted bug's fixture: a proxy that forwards each request to a
//! remote worker with `ask`, and answers its own caller when the reply
//! comes. When the worker's node dies mid-ask, the remote ask fails with
//! `PeerLost`; the buggy proxy drops that error instead of passing it on,
//! so its caller waits for ever. The fixed one passes it on.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use kaspar::prelude::*;
use kaspar::{Ask, AskError};
use kaspar_remote::RemoteAddr;

use super::{Work, Worker};

/// A caller's answer: set once by the proxy, awaited by the caller.
#[derive(Clone, Default)]
pub struct Answer(Arc<Mutex<AnswerState>>);

#[derive(Default)]
pub struct AnswerState {
    value: Option<Result<u64, AskError>>,
    waker: Option<Waker>,
}

impl Answer {
    fn set(&self, r: Result<u64, AskError>) {
        let mut s = self.0.lock().unwrap();
        s.value = Some(r);
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    }
}

impl Future for Answer {
    type Output = Result<u64, AskError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = self.0.lock().unwrap();
        match s.value.take() {
            Some(r) => Poll::Ready(r),
            None => {
                s.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

pub struct Forward(pub u64, pub Answer);
pub struct Connect(pub RemoteAddr<Worker>);
/// The remote ask numbered so may have its outcome.
pub struct Poke(pub u64);

/// Wakes the proxy with a `Poke` when a remote ask completes.
struct CheckOn(Addr<Proxy>, u64);

impl Wake for CheckOn {
    fn wake(self: Arc<Self>) {
        let _ = self.0.send(Poke(self.1));
    }
}

#[actor]
pub struct Proxy {
    /// Whether it answers its caller when the remote ask fails (the fix).
    fixed: bool,
    remote: Option<RemoteAddr<Worker>>,
    waiting: HashMap<u64, (Ask<u64>, Answer)>,
    next: u64,
}

#[actor]
impl Proxy {
    #[handler(Connect)]
    fn connect(&mut self, c: Connect, _ctx: &mut Ctx<Self>) {
        self.remote = Some(c.0);
    }

    #[handler(Forward)]
    fn forward(&mut self, f: Forward, ctx: &mut Ctx<Self>) {
        let remote = self.remote.as_ref().expect("connected first");
        match remote.ask(Work(f.0)) {
            Ok(ask) => {
                self.next += 1;
                self.waiting.insert(self.next, (ask, f.1));
                self.look(self.next, ctx);
            }
            // The link was found lost before the ask went out.
            Err(_) => f.1.set(Err(AskError::PeerLost)),
        }
    }

    #[handler(Poke)]
    fn poke(&mut self, c: Poke, ctx: &mut Ctx<Self>) {
        self.look(c.0, ctx);
    }
}

impl Proxy {
    /// A proxy, not connected yet; `fixed`: whether it passes a failed
    /// remote ask's error on to its caller.
    pub fn new(fixed: bool) -> Self {
        Proxy {
            fixed,
            remote: None,
            waiting: HashMap::new(),
            next: 0,
        }
    }

    /// Looks at remote ask `k`: answers its caller once it has an outcome.
    fn look(&mut self, k: u64, ctx: &mut Ctx<Self>) {
        let Some((mut ask, answer)) = self.waiting.remove(&k) else {
            return;
        };
        let waker = Waker::from(Arc::new(CheckOn(ctx.myself(), k)));
        match Pin::new(&mut ask).poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(Ok(v)) => answer.set(Ok(v)),
            Poll::Ready(Err(e)) if self.fixed => answer.set(Err(e)),
            // The bug: the error is dropped, and the caller never hears.
            Poll::Ready(Err(_)) => {}
            Poll::Pending => {
                self.waiting.insert(k, (ask, answer));
            }
        }
    }
}
