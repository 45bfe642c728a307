//! The market-data pipeline of the paper's Figure 1, on kaspar.
//!
//! ```text
//!  socket A ─ SocketReader ─┐                  one thread, one #[group]
//!                           ├─ send ─▶ Buffer ─fast_send▶ Arbiter ─▶ Decoder ─▶ BookBuilder ─▶ Signal ─ send ─▶ OrderOut
//!  socket B ─ SocketReader ─┘  (or fast_send: the reader's thread runs the whole group chain)
//! ```
//!
//! * **Capture** (`socket_reader.rs`): one [`SocketReader`] actor per feed. Its
//!   handler drains the socket until told to stop, on the actor's own
//!   thread, and hands each datagram on: by `send` through the group's
//!   mailbox (`two-stage`) or by `fast_send`, running the chain itself
//!   (`one-thread`). Datagrams live in pooled buffers (`datagram.rs`): no
//!   system allocation per datagram in steady state.
//! * **Decode, book, signal** (`group/`): the [`MarketData`] group.
//!   [`Buffer`] is the queue's service handler; each stage calls the next
//!   by `fast_send`, so the chain runs inline on whichever thread holds the
//!   group.
//! * **Order out** (`order_out.rs`): [`OrderOut`], a standalone actor
//!   reached by `send`.
//!
//! The group's handlers read time only through `Ctx::now` and take all
//! their input as [`Datagram`] messages, so the same group can be driven
//! from a capture file under a virtual clock. The [`Buffer`] can journal
//! every datagram in the order the group handled it ([`ArrivalLog`],
//! `journal.rs`); [`replay`](super::replay) joins that with the capture
//! file and feeds it to a `kaspar::Simulation` of the same group (see the
//! example's README).
//!
//! Everything is re-exported here, so users name it
//! `pipeline::MarketData` and so on. A message lives beside the actor
//! that handles it; [`Counters`], which every actor answers, lives here.

mod datagram;
mod group;
mod journal;
mod order_out;
mod socket_reader;

pub use self::{
    datagram::{new_buf, Buf, Datagram, InFlight, QLEN_NONE},
    group::{
        Apply, Arbiter, BookBuilder, Buffer, Decoder, EndOfFeed, GroupResults, MarketData, Publish,
        Record, Signal, StartJournal, TakeArrivals, TakeResults, ToArbiter, ToBook, ToDecoder,
        ToOrderOut, ToSignal, TopOfBook,
    },
    journal::{ArrivalLog, Stamp},
    order_out::{Order, OrderLog, OrderOut},
    socket_reader::{ReadUntilStopped, ReaderStats, Route, SocketReader},
};

/// Asks a member for its counters.
pub struct Counters;
