//! The kit: code that kaspar's examples, tests and benches share.
//!
//! This unpublished package owns `examples/`, `tests/` and `benches/`, and
//! its library is where their shared code lives, so that no target
//! includes another's files. Nothing here is part of kaspar's API.
//!
//! * [`alloc`]: a counting global allocator, for tests that prove a path
//!   allocates nothing.

pub mod alloc;
