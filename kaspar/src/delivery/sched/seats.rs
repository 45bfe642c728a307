//! Where a hosted pool's runners wait for work, and which one a schedule
//! wakes (the `tokio` module's [`Host`](super::tokio) keeps one seat per
//! runner, beside the runner's waker). Plain atomics, no tokio types, so
//! that the loom model `tests/loom_host_seats.rs` drives this very code.
//!
//! The protocol:
//!
//! * A runner with nothing to run [`sit`](Seats::sit)s (`waiting`, then
//!   a `SeqCst` fence), then looks at the queue once more; if it finds
//!   work it [`rise`](Seats::rise)s, taking its seat back if nobody took
//!   it meanwhile (then a schedule has woken it, or will).
//! * A schedule pushes, then [`wake_one`](Seats::wake_one) (a `SeqCst`
//!   fence first): it takes the first waiting seat and names it for the
//!   caller to wake, recording the scheduling thread's token in the seat
//!   and in `coming`. Either the runner's fence comes first and the
//!   schedule sees it waiting, or the schedule's does and the runner's
//!   last look sees the push.
//! * A woken runner [`arrive`](Seats::arrive)s as its poll begins: it
//!   clears `coming` if that still names its waker, then looks at the
//!   queue, and before its poll ends it sits and looks again.
//! * A schedule whose own thread's token is in `coming`, with the queue
//!   holding only its push, wakes nobody: a runner it woke has not
//!   arrived, or has arrived and has yet to sit and look again. The
//!   clearing comes before the runner's sitting fence: either the
//!   schedule's fence comes first (and the runner's last look sees the
//!   push), or the runner's does, and the schedule reads `coming`
//!   cleared and the seat waiting, and wakes it.
//!
//! What the loom model checks (`tests/loom_host_seats.rs`, in every
//! interleaving it explores): no push is left with every runner waiting
//! and none woken.

use crate::base::sync::{fence, AtomicBool, AtomicUsize, Ordering};

/// The runners' seats, and the runner on its way.
pub struct Seats {
    seats: Box<[Seat]>,
    /// The token of the thread whose schedule last woke a runner that
    /// has not arrived since (0: none on its way).
    coming: AtomicUsize,
}

impl std::fmt::Debug for Seats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seats")
            .field("seats", &self.seats.len())
            .field("coming", &self.coming.load(Ordering::Relaxed))
            .finish()
    }
}

struct Seat {
    waiting: AtomicBool,
    /// The token of the thread whose schedule woke this seat's runner,
    /// until it arrives (0: not woken by a schedule).
    woken_by: AtomicUsize,
}

impl Seats {
    /// `n` seats, none waiting.
    pub fn new(n: usize) -> Self {
        Seats {
            seats: (0..n)
                .map(|_| Seat {
                    waiting: AtomicBool::new(false),
                    woken_by: AtomicUsize::new(0),
                })
                .collect(),
            coming: AtomicUsize::new(0),
        }
    }

    /// After a push by the thread whose token is `me` (nonzero), with
    /// `queued` the queue's length now (this push included): the seat
    /// whose runner the caller must wake, taken out of waiting; `None` if
    /// none waits, or if a runner `me` woke has not arrived and the queue
    /// holds only this push.
    pub fn wake_one(&self, me: usize, queued: impl FnOnce() -> usize) -> Option<usize> {
        // Pairs with the fence of a runner that sits: either its last look
        // sees the push, or this sees it waiting and `coming` cleared by
        // its arrival before it sat.
        fence(Ordering::SeqCst);
        if self.coming.load(Ordering::Relaxed) == me && queued() <= 1 {
            return None;
        }
        for (i, seat) in self.seats.iter().enumerate() {
            if seat.waiting.load(Ordering::Relaxed) && seat.waiting.swap(false, Ordering::AcqRel) {
                seat.woken_by.store(me, Ordering::Relaxed);
                self.coming.store(me, Ordering::Relaxed);
                return Some(i);
            }
        }
        None
    }

    /// Takes every waiting seat (the pool is exiting) and has `wake`
    /// wake each one's runner.
    pub fn take_all(&self, mut wake: impl FnMut(usize)) {
        fence(Ordering::SeqCst);
        for (i, seat) in self.seats.iter().enumerate() {
            if seat.waiting.swap(false, Ordering::AcqRel) {
                wake(i);
            }
        }
    }

    /// Seat `seat`'s runner begins a poll: if a schedule woke it, it is
    /// no longer on its way. Before the runner looks at the queue; its
    /// [`sit`](Self::sit) later in the same poll orders the clearing
    /// (module docs).
    pub fn arrive(&self, seat: usize) {
        let by = self.seats[seat].woken_by.swap(0, Ordering::Relaxed);
        if by != 0 {
            let _ = self
                .coming
                .compare_exchange(by, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// Seat `seat`'s runner found nothing to run: it waits, and must look
    /// at the queue once more after this.
    pub fn sit(&self, seat: usize) {
        self.seats[seat].waiting.store(true, Ordering::Release);
        fence(Ordering::SeqCst);
    }

    /// Seat `seat`'s runner, having sat, found work: whether its seat was
    /// still its own (then it runs again at once; otherwise a schedule
    /// took the seat and wakes it).
    pub fn rise(&self, seat: usize) -> bool {
        self.seats[seat].waiting.swap(false, Ordering::AcqRel)
    }
}
