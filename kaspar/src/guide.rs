//! The guide (`book/src/*.md`), compiled as doctests.
//!
//! Each chapter of the mdBook guide is included here as the documentation
//! of an empty module, so `cargo test --doc -p kaspar` compiles (and runs)
//! every ```rust sample in it against the current code. Only built under
//! `cfg(doctest)`; nothing here is part of the API.

#[doc = include_str!("../../book/src/introduction.md")]
pub mod introduction {}

#[doc = include_str!("../../book/src/quick-start.md")]
pub mod quick_start {}

#[doc = include_str!("../../book/src/actors-and-handlers.md")]
pub mod actors_and_handlers {}

#[doc = include_str!("../../book/src/delivery.md")]
pub mod delivery {}

#[doc = include_str!("../../book/src/transparency.md")]
pub mod transparency {}

#[doc = include_str!("../../book/src/cycles-and-deadlocks.md")]
pub mod cycles_and_deadlocks {}

#[doc = include_str!("../../book/src/supervision.md")]
pub mod supervision {}

#[doc = include_str!("../../book/src/groups-and-simulation.md")]
pub mod groups_and_simulation {}

#[doc = include_str!("../../book/src/mailboxes.md")]
pub mod mailboxes {}

#[doc = include_str!("../../book/src/memory-pool.md")]
pub mod memory_pool {}

#[doc = include_str!("../../book/src/performance.md")]
pub mod performance {}

#[doc = include_str!("../../book/src/pipeline.md")]
pub mod pipeline {}

#[doc = include_str!("../../book/src/prior-art.md")]
pub mod prior_art {}
