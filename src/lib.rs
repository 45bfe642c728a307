//! The kit: code that kaspar's examples, tests and benches share.
//!
//! This unpublished package owns `examples/`, `tests/` and `benches/`, and
//! its library is where their shared code lives, so that no target
//! includes another's files. Nothing here is part of kaspar's API.
//!
//! * [`alloc`]: a counting global allocator, for tests that prove a path
//!   allocates nothing;
//! * [`backtest`]: the `backtest` example's strategy group;
//! * [`rng`]: the one seeded random generator, xorshift64*;
//! * [`bench`](mod@bench): the benches' machine header, JSON-lines output,
//!   percentiles and charts, and the measuring code of each table the
//!   benches reproduce (the `tick_to_book` example reports through it too);
//! * [`tick_to_book`]: the case study's feed, exchange, pipeline and
//!   simulation replay, which the example runs and its test checks;
//! * [`trading_desk`]: the `trading_desk` example's system, which the
//!   example runs live and `tests/sim_trading_desk.rs` under `kaspar::sim`;
//! * [`watch`]: the watchdog that turns a hanging scenario into a failed
//!   test, for the tests that reproduce hangs.

pub mod alloc;
pub mod backtest;
pub mod bench;
pub mod rng;
pub mod tick_to_book;
pub mod trading_desk;
pub mod watch;

/// The guide's chapter on remote actors, compiled as doctests
/// (`cargo test --doc`) here rather than with the other chapters in the
/// runtime crate: its samples use kaspar-remote, a dev-dependency of this
/// package, which itself depends on the runtime.
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../book/src/remote.md")]
    pub mod remote {}

    // The chapter on threads, groups and the pool needs only the runtime;
    // it is compiled here, beside the runtime crate's own list of
    // chapters, to leave that crate's sources alone while its pool is
    // being worked on.
    #[doc = include_str!("../book/src/threads-groups-pool.md")]
    pub mod threads_groups_pool {}
    #[doc = include_str!("../book/src/pool-streams.md")]
    pub mod pool_streams {}

    // Likewise the chapter on metrics, whose samples need kaspar's
    // `metrics` feature and the Prometheus exporter: compiled with this
    // package's `metrics` feature only (`bash .ci/steps/metrics.sh`).
    #[cfg(feature = "metrics")]
    #[doc = include_str!("../book/src/observing.md")]
    pub mod observing {}

    // And the chapter on the live console, whose samples need kaspar's
    // `console` feature (`bash .ci/steps/console.sh`).
    #[cfg(feature = "console")]
    #[doc = include_str!("../book/src/console.md")]
    pub mod console {}

    // And the chapter on tracing, whose samples need kaspar's `tracing`
    // feature and a subscriber (`bash .ci/steps/tracing.sh`).
    #[cfg(feature = "tracing")]
    #[doc = include_str!("../book/src/tracing.md")]
    pub mod tracing {}
}
