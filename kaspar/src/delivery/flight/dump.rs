//! A flight recorder's dump: the ring's records as a journal.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::delivery::flight::format::{
    header, record_head, HEAD_LEN, KIND_LOST, VERSION_LOST, VERSION_TIMERS,
};
use crate::delivery::flight::ring::Ring;

/// A flight recorder's journal, as
/// [`FlightRecorder::dump`](super::FlightRecorder::dump) took it.
#[derive(Clone)]
pub struct FlightDump {
    journal: Vec<u8>,
    records: usize,
    lost: usize,
    overwritten: u64,
}

impl fmt::Debug for FlightDump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlightDump")
            .field("records", &self.records)
            .field("lost", &self.lost)
            .field("overwritten", &self.overwritten)
            .field("bytes", &self.journal.len())
            .finish()
    }
}

impl FlightDump {
    /// The journal of what `ring` holds, oldest first: version 2, or 3 if
    /// it holds a lost record.
    pub(super) fn of(ring: &Ring) -> FlightDump {
        let held: Vec<_> = ring.iter().collect();
        let lost = held.iter().filter(|(m, _)| m.kind == KIND_LOST).count();
        let version = if lost > 0 {
            VERSION_LOST
        } else {
            VERSION_TIMERS
        };
        let size = 8 + held
            .iter()
            .map(|(m, _)| HEAD_LEN + m.len as usize)
            .sum::<usize>();
        let mut journal = Vec::with_capacity(size);
        journal.extend_from_slice(&header(version));
        for (meta, payload) in &held {
            journal.extend_from_slice(&record_head(meta.len, meta.at, meta.kind));
            journal.extend_from_slice(payload);
        }
        FlightDump {
            journal,
            records: held.len(),
            lost,
            overwritten: ring.taken() - held.len() as u64,
        }
    }

    /// The journal's bytes (header and records), as a file holds them.
    pub fn as_bytes(&self) -> &[u8] {
        &self.journal
    }

    /// The journal's bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.journal
    }

    /// Records in the journal (inputs, timer firings and lost ones).
    pub fn records(&self) -> usize {
        self.records
    }

    /// Records in the journal that are lost inputs: a replay stops at the
    /// first with an error.
    pub fn lost(&self) -> usize {
        self.lost
    }

    /// Records taken before the journal's first one, which the ring no
    /// longer held.
    pub fn overwritten(&self) -> u64 {
        self.overwritten
    }

    /// Whether the journal holds every record taken since the recorder was
    /// attached: then a replay from the members' initial states replays
    /// the whole live run, not a window of it.
    pub fn from_start(&self) -> bool {
        self.overwritten == 0
    }

    /// Writes the journal to `path`, replacing it whole: the bytes go to a
    /// file beside it first, which is then renamed over `path`, so a
    /// reader never sees half a dump.
    pub fn write_to(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref();
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let mut file = std::fs::File::create(&partial)?;
        file.write_all(&self.journal)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&partial, path)
    }
}
