//! Unpublished package that owns the workspace examples, tests and benches.
