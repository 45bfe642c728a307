//! The group's [`Arbiter`]: the actor around [`feed::Arbiter`]. It counts
//! datagrams too short to carry a sequence number, offers the rest, and
//! passes each packet that can go on to the decoder by `fast_send`.

use kaspar::prelude::*;

use super::Decoder;
use crate::tick_to_book::feed::{self, ArbiterStats};
use crate::tick_to_book::pipeline::{Counters, Datagram};

/// Connects the arbiter to the decoder.
pub struct ToDecoder(pub Addr<Decoder>);

/// Tells the arbiter the feed has ended: declare the holes, pass on what it
/// holds.
pub struct EndOfFeed;

/// A/B arbitration: the first copy of each sequence number goes on, in
/// sequence order.
#[actor]
#[derive(Default)]
pub struct Arbiter {
    arb: feed::Arbiter<Datagram>,
    decoder: Option<Addr<Decoder>>,
    runts: u64,
}

#[actor]
impl Arbiter {
    #[handler(ToDecoder)]
    fn wire(&mut self, msg: ToDecoder, _ctx: &mut Ctx<Self>) {
        self.decoder = Some(msg.0);
    }

    #[handler(Datagram)]
    fn datagram(&mut self, msg: Datagram, _ctx: &mut Ctx<Self>) {
        let Some(seq) = feed::peek_seq(msg.bytes()) else {
            self.runts += 1;
            return;
        };
        let decoder = self.decoder.as_ref().expect("wired");
        self.arb.offer(seq, msg, |d| {
            let _ = decoder.fast_send(d);
        });
    }

    #[handler(EndOfFeed)]
    fn end(&mut self, _msg: EndOfFeed, _ctx: &mut Ctx<Self>) {
        let decoder = self.decoder.as_ref().expect("wired");
        self.arb.flush(|d| {
            let _ = decoder.fast_send(d);
        });
    }

    /// (stats, lost ranges, next expected sequence number, datagrams too
    /// short to carry a sequence number).
    #[handler(Counters)]
    fn counters(
        &mut self,
        _msg: Counters,
        _ctx: &mut Ctx<Self>,
    ) -> (ArbiterStats, Vec<(u32, u32)>, u32, u64) {
        (
            self.arb.stats(),
            self.arb.gap_ranges().to_vec(),
            self.arb.next_expected(),
            self.runts,
        )
    }
}
