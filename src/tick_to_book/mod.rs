//! The library half of the paper's case study (§8, §10, §11): what the
//! `tick_to_book` example runs and `tests/tick_to_book.rs` checks. The
//! program itself (command line, one configuration's run and its checks,
//! the report) is the example, in `examples/tick_to_book/`; its README
//! describes the whole.
//!
//! * [`feed`]: the wire format (modelled on CME MDP 3.0 / SBE), the
//!   validating decoder, the encoder, the market-by-price book and A/B
//!   arbitration; no actors, no sockets (the fuzz target uses it too);
//! * [`generator`]: the synthetic exchange: Hawkes arrivals, the matching
//!   engine and packetizer, the UDP sender of feeds A and B, the capture
//!   file;
//! * [`pipeline`]: Figure 1 on kaspar: the socket readers, the
//!   decode-and-book group [`MarketData`](pipeline::MarketData), order out;
//! * [`analysis`]: a run's records summarised per stream as §10 reports
//!   them (Tables 8–12, Figure 4);
//! * [`replay`]: the group replayed in a `kaspar::Simulation` from a live
//!   run's recorded arrivals, and the comparison with the live run.

pub mod analysis;
pub mod feed;
pub mod generator;
pub mod pipeline;
pub mod replay;
