//! After a live run: where its capture and arrivals files go ([`Files`]),
//! and the simulation replay check ([`simulate`]), which runs the
//! library's `tick_to_book::replay` on them and reports whether the
//! simulated group equals the live one.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kaspar_suite::tick_to_book::generator::{read_capture, security_ids};
use kaspar_suite::tick_to_book::pipeline::{ArrivalLog, GroupResults, Order};
use kaspar_suite::tick_to_book::replay::{self, Arrivals};

use crate::cli::{Config, Options};

/// Where a configuration's packet stream and arrivals go.
pub struct Files {
    /// The generator's capture of the packet stream, if any.
    pub capture: Option<PathBuf>,
    /// The arrivals file.
    pub arrivals: PathBuf,
    /// Whether the files stay after the run (`--capture` was given).
    pub keep: bool,
}

impl Files {
    /// With `--capture PATH`: the first configuration's packet stream goes
    /// to PATH, any other's to `PATH.<case>`, and each one's arrivals to
    /// `PATH.<case>.arrivals`; all stay. Without it, a replay needs both
    /// files anyway: they go to the temporary directory and are removed.
    pub fn of(o: &Options, config: Config) -> Files {
        let suffixed = |p: &Path, suffix: String| {
            let mut name = p.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        };
        match &o.capture {
            Some(p) => Files {
                capture: if config == o.configs[0] {
                    Some(p.clone())
                } else {
                    o.replay.then(|| suffixed(p, format!(".{}", config.case())))
                },
                arrivals: suffixed(p, format!(".{}.arrivals", config.case())),
                keep: true,
            },
            None => {
                let tmp = std::env::temp_dir().join(format!(
                    "kaspar-tick_to_book-{}-{}",
                    std::process::id(),
                    config.case()
                ));
                Files {
                    capture: o.replay.then(|| suffixed(&tmp, ".cap".into())),
                    arrivals: suffixed(&tmp, ".arrivals".into()),
                    keep: false,
                }
            }
        }
    }
}

/// Simulation replay (paper §11): joins the buffer's journal with the
/// capture into the group's input sequence, writes it to the arrivals file,
/// reads it back, replays it into a simulated group and compares the
/// orders, books, records and counters with the live run's. Pushes the
/// report lines; returns whether they were identical.
pub fn simulate(
    files: &Files,
    log: &ArrivalLog,
    live_orders: &[Order],
    live: &GroupResults,
    lines: &mut Vec<String>,
) -> bool {
    let result = (|| -> Result<(Arrivals, replay::Replayed, Duration), String> {
        let cap = files.capture.as_deref().ok_or("no capture")?;
        let packets = read_capture(cap).map_err(|e| format!("{}: {e}", cap.display()))?;
        let arrivals = replay::join(log, &packets)?;
        let path = &files.arrivals;
        replay::write_arrivals(path, &arrivals).map_err(|e| format!("{}: {e}", path.display()))?;
        let from_file =
            replay::read_arrivals(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if from_file != arrivals {
            return Err(format!("{} does not read back as written", path.display()));
        }
        let started = Instant::now();
        let sim = replay::replay(&from_file, &security_ids());
        let wall = started.elapsed();
        replay::compare(live_orders, live, &sim)?;
        Ok((from_file, sim, wall))
    })();
    if !files.keep {
        for p in files.capture.iter().chain([&files.arrivals]) {
            let _ = std::fs::remove_file(p);
        }
    }
    match result {
        Ok((arrivals, sim, wall)) => {
            lines.push(format!(
                "simulation replay: identical ({} signals); {} datagrams ({} KiB) replayed from {} on virtual time in {:.1} ms; \
                 the books, {} records and every counter are equal too",
                sim.orders.len(),
                arrivals.len(),
                arrivals.payload_bytes() / 1024,
                if files.keep {
                    files.arrivals.display().to_string()
                } else {
                    "the arrivals file".into()
                },
                wall.as_secs_f64() * 1e3,
                sim.results.records.len(),
            ));
            true
        }
        Err(why) => {
            lines.push(format!("simulation replay: DIFFERENT: {why}"));
            false
        }
    }
}
