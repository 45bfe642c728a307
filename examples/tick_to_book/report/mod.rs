//! The report of the paper's §10 measurements, which the suite's
//! `tick_to_book::analysis` computes: markdown, JSON lines and SVG.
//!
//! * `text.rs`: the markdown tables (Tables 8–12, Figure 4's data) and the
//!   JSON lines;
//! * `charts.rs`: the charts, drawn by the suite's SVG writer.

mod charts;
mod text;

pub use charts::charts;
pub use text::{json, markdown};
