//! Simulated clients: the test's own "threads", as tasks the simulator
//! polls one step at a time, and the futures they wait with (virtual
//! sleeps, yields) besides kaspar's own (`ask(..).await`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use parking_lot::Mutex;

use super::core::Core;
use crate::base::clock::Time;

/// The clients of one run.
#[derive(Default)]
pub(crate) struct Clients {
    tasks: Vec<Option<Client>>,
    /// Clients woken and not yet run, in the order they were woken.
    woken: Arc<Mutex<Vec<u32>>>,
}

struct Client {
    name: Arc<str>,
    task: Pin<Box<dyn Future<Output = ()>>>,
    waker: Arc<ClientWaker>,
}

/// Wakes one client: puts it on the woken list, once until it runs.
struct ClientWaker {
    id: u32,
    woken: Arc<Mutex<Vec<u32>>>,
    queued: AtomicBool,
}

impl Wake for ClientWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.woken.lock().push(self.id);
        }
    }
}

impl Clients {
    /// Adds a client; it is ready at once.
    pub(crate) fn add(&mut self, name: &str, task: Pin<Box<dyn Future<Output = ()>>>) -> u32 {
        let id = self.tasks.len() as u32;
        let waker = Arc::new(ClientWaker {
            id,
            woken: Arc::clone(&self.woken),
            queued: AtomicBool::new(false),
        });
        waker.wake_by_ref();
        self.tasks.push(Some(Client {
            name: name.into(),
            task,
            waker,
        }));
        id
    }

    /// The woken clients, in order, into `out`.
    pub(crate) fn woken(&self, out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.woken.lock().iter().copied());
    }

    /// Runs woken client `i` (an index into [`woken`](Self::woken)) until
    /// it waits or ends; returns its number and name.
    pub(crate) fn run(&mut self, i: usize) -> (u32, Arc<str>) {
        let id = self.woken.lock().remove(i);
        let slot = &mut self.tasks[id as usize];
        let Some(client) = slot else {
            return (id, "gone".into());
        };
        let name = Arc::clone(&client.name);
        client.waker.queued.store(false, Ordering::Release);
        let waker = Waker::from(Arc::clone(&client.waker));
        let mut cx = Context::from_waker(&waker);
        if client.task.as_mut().poll(&mut cx).is_ready() {
            *slot = None;
        }
        (id, name)
    }

    /// The clients that have not finished, by name.
    pub(crate) fn unfinished(&self) -> Vec<Arc<str>> {
        self.tasks
            .iter()
            .flatten()
            .map(|c| Arc::clone(&c.name))
            .collect()
    }

    /// Drops every client's task (at the end of a run).
    pub(crate) fn clear(&mut self) {
        self.tasks.clear();
        self.woken.lock().clear();
    }
}

/// Clients asleep on virtual time, by due time, then order of sleeping.
#[derive(Default)]
pub(crate) struct Sleepers {
    heap: BinaryHeap<Reverse<(Time, u64, WakerKey)>>,
    seq: u64,
}

/// A waker in the sleepers' heap, ordered by nothing (the heap orders by
/// due time and sequence, which are unique).
struct WakerKey(Waker);

impl PartialEq for WakerKey {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for WakerKey {}
impl PartialOrd for WakerKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for WakerKey {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl Sleepers {
    fn add(&mut self, due: Time, waker: Waker) {
        self.seq += 1;
        self.heap.push(Reverse((due, self.seq, WakerKey(waker))));
    }

    /// The earliest due time.
    pub(crate) fn next_due(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Wakes every sleeper due at `now`.
    pub(crate) fn wake_due(&mut self, now: Time) {
        while let Some(Reverse((due, _, _))) = self.heap.peek() {
            if *due > now {
                break;
            }
            if let Some(Reverse((_, _, WakerKey(w)))) = self.heap.pop() {
                w.wake();
            }
        }
    }
}

/// Waits `d` of virtual time (inside a simulated client).
///
/// # Panics
///
/// When polled outside a simulated run.
pub fn sleep(d: Duration) -> Sleep {
    Sleep { d, due: None }
}

/// The future of [`sleep`].
#[derive(Debug)]
#[must_use = "a sleep does nothing unless awaited"]
pub struct Sleep {
    d: Duration,
    due: Option<Time>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Core::with(|core| {
            let now = core.clock.now();
            let d = self.d;
            let due = *self.due.get_or_insert_with(|| now.saturating_add(d));
            if now >= due {
                return Poll::Ready(());
            }
            core.sleepers.borrow_mut().add(due, cx.waker().clone());
            Poll::Pending
        })
    }
}

/// Lets the simulator choose another step before the calling client goes
/// on (inside a simulated client): a point where another client or an
/// actor may run. Under PCT the client drops below every other chain.
///
/// # Panics
///
/// When polled outside a simulated run.
pub fn yield_now() -> YieldNow {
    YieldNow(false)
}

/// The future of [`yield_now`].
#[derive(Debug)]
#[must_use = "a yield does nothing unless awaited"]
pub struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        // Tells the strategy (PCT lowers a client that yields).
        Core::with(|core| core.yielded.set(true));
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// A number from the run's seed (inside a simulated run): what a client
/// chooses at random, the same on every replay of the seed.
///
/// # Panics
///
/// Outside a simulated run.
pub fn random() -> u64 {
    Core::with(|core| core.client_rng.borrow_mut().next_u64())
}

/// The run's virtual time (inside a simulated run).
///
/// # Panics
///
/// Outside a simulated run.
pub fn now() -> Time {
    Core::with(|core| core.clock.now())
}
