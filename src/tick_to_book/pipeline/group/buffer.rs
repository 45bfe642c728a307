//! [`Buffer`]: the group's entry point and its queue's service handler.
//! Every datagram, whichever way it arrives, is counted, journaled if the
//! journal is on, and passed down the chain by `fast_send`.

use kaspar::prelude::*;

use super::Arbiter;
use crate::tick_to_book::pipeline::{ArrivalLog, Counters, Datagram};

/// Connects the buffer to the arbiter.
pub struct ToArbiter(pub Addr<Arbiter>);

/// Turns on the buffer's arrival journal, with room reserved for this many
/// datagrams (so that recording does not reallocate on the timed path).
pub struct StartJournal {
    /// Datagrams to reserve room for.
    pub datagrams: usize,
}

/// Takes the arrival journal out of the buffer (empty if it was off).
pub struct TakeArrivals;

/// The queue: the group's entry point. Every datagram, whichever way it
/// arrives, goes down the chain from here by `fast_send`.
#[actor]
#[derive(Default)]
pub struct Buffer {
    arbiter: Option<Addr<Arbiter>>,
    received: u64,
    chain_errors: u64,
    journal: Option<ArrivalLog>,
}

#[actor]
impl Buffer {
    #[handler(ToArbiter)]
    fn wire(&mut self, msg: ToArbiter, _ctx: &mut Ctx<Self>) {
        self.arbiter = Some(msg.0);
    }

    #[handler(Datagram)]
    fn datagram(&mut self, mut msg: Datagram, _ctx: &mut Ctx<Self>) {
        self.received += 1;
        // It has left the mailbox.
        drop(msg.ticket.take());
        if let Some(j) = &mut self.journal {
            j.record(&msg);
        }
        let arbiter = self
            .arbiter
            .as_ref()
            .expect("wired before the first datagram");
        if arbiter.fast_send(msg).is_err() {
            self.chain_errors += 1;
        }
    }

    /// (datagrams received, chain errors).
    #[handler(Counters)]
    fn counters(&mut self, _msg: Counters, _ctx: &mut Ctx<Self>) -> (u64, u64) {
        (self.received, self.chain_errors)
    }

    #[handler(StartJournal)]
    fn start_journal(&mut self, msg: StartJournal, _ctx: &mut Ctx<Self>) {
        self.journal = Some(ArrivalLog::with_capacity(msg.datagrams));
    }

    #[handler(TakeArrivals)]
    fn take_arrivals(&mut self, _msg: TakeArrivals, _ctx: &mut Ctx<Self>) -> ArrivalLog {
        self.journal.take().unwrap_or_default()
    }
}
