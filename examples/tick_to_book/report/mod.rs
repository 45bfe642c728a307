//! The measurements, as the paper's §10 reports them: the distribution by
//! stream (Tables 8 and 12), the floor + slope × idx model fitted on
//! medians at qlen = 0 (Table 9), the direct floor at qlen = 0, idx = 0
//! (Table 10), and the median by queue length (Figure 4). Markdown, JSON
//! lines and SVG.
//!
//! * `stats.rs`: the analysis, records to [`StreamStats`](stats::StreamStats) and
//!   [`ConfigReport`];
//! * `text.rs`: the markdown tables and the JSON lines;
//! * `charts.rs`: the charts, drawn by the suite's SVG writer.

mod charts;
mod stats;
mod text;

pub use charts::charts;
pub use stats::{analyse, ConfigReport};
pub use text::{json, markdown};
