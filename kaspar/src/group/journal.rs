//! Journal and replay (feature `journal`): record what enters a live group,
//! with arrival times, and feed the same sequence to a [`Simulation`].
//!
//! Inputs are a type of the user's that opts in with serde
//! (`Serialize + DeserializeOwned`), usually an enum of the messages the
//! outside world sends the group, and a routing function that hands one
//! input to the right member. [`Journaled::feed`] stamps the input with the
//! group's clock, routes it, and appends it to the journal, all under one
//! lock, so the journal's order is the order the inputs entered the
//! group's queue even with several feeding threads. [`Simulation::replay`]
//! moves virtual time to each record's arrival time (firing timers due on
//! the way) and routes it the same way.
//!
//! # File format
//!
//! A header, `KSPRJNL` and a format version byte, then records: payload
//! length (`u32`, little-endian), arrival time in nanoseconds (`u64`,
//! little-endian), and the payload, the input encoded with postcard. A
//! damaged or truncated file is reported as a [`JournalError`] naming the
//! byte offset of the bad record; reading never panics on bad input.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::marker::PhantomData;
use std::path::Path;

use crate::base::sync::Mutex;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::base::clock::{Clock, Time};
use crate::group::sim::Simulation;
use crate::group::GroupSpec;

const MAGIC: &[u8; 7] = b"KSPRJNL";
const VERSION: u8 = 1;
/// Larger records are taken for corruption rather than allocated.
const MAX_RECORD: u32 = 64 << 20;

/// Hands one input to a member; returns whether the group accepted it.
pub type Route<G, I> = fn(&G, I) -> bool;

/// A journal that could not be read.
#[derive(Debug)]
pub struct JournalError {
    /// Byte offset of the header or record that is bad.
    pub offset: u64,
    /// What is wrong there.
    pub kind: JournalErrorKind,
}

/// What is wrong with a journal.
#[derive(Debug)]
#[non_exhaustive]
pub enum JournalErrorKind {
    /// Not a kaspar journal, or a version this build cannot read.
    BadHeader,
    /// The file ends inside a record.
    Truncated,
    /// A record's length is implausible.
    BadLength(u32),
    /// A payload does not decode as the input type.
    Decode(String),
    /// Reading failed.
    Io(io::Error),
}

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        match &self.kind {
            JournalErrorKind::BadHeader => {
                write!(f, "not a kaspar journal (bad header at byte {at})")
            }
            JournalErrorKind::Truncated => {
                write!(f, "journal truncated inside the record at byte {at}")
            }
            JournalErrorKind::BadLength(n) => {
                write!(f, "corrupt journal: record at byte {at} claims {n} bytes")
            }
            JournalErrorKind::Decode(e) => {
                write!(
                    f,
                    "corrupt journal: record at byte {at} does not decode: {e}"
                )
            }
            JournalErrorKind::Io(e) => write!(f, "reading journal at byte {at}: {e}"),
        }
    }
}

impl std::error::Error for JournalError {}

/// A live group's input side, journaling every input it routes.
pub struct Journaled<'g, G: GroupSpec, I> {
    group: &'g G,
    route: Route<G, I>,
    clock: Clock,
    out: Mutex<Writer>,
}

struct Writer {
    file: BufWriter<File>,
    buf: Vec<u8>,
}

impl<G: GroupSpec, I> fmt::Debug for Journaled<'_, G, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Journaled({})", G::NAME)
    }
}

impl<'g, G: GroupSpec, I: Serialize> Journaled<'g, G, I> {
    /// Creates (truncates) the journal file at `path`. `clock` stamps the
    /// arrivals: the clock the group's members read.
    pub fn create(
        path: impl AsRef<Path>,
        group: &'g G,
        clock: Clock,
        route: Route<G, I>,
    ) -> io::Result<Self> {
        let mut file = BufWriter::new(File::create(path)?);
        file.write_all(MAGIC)?;
        file.write_all(&[VERSION])?;
        Ok(Journaled {
            group,
            route,
            clock,
            out: Mutex::new(Writer {
                file,
                buf: Vec::new(),
            }),
        })
    }

    /// Routes `input` into the group and journals it with its arrival time.
    /// Returns `Ok(false)` (and journals nothing) if the group refused it.
    pub fn feed(&self, input: I) -> io::Result<bool> {
        let mut out = self.out.lock();
        let w = &mut *out;
        w.buf.clear();
        let payload = postcard::to_extend(&input, std::mem::take(&mut w.buf))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        w.buf = payload;
        let at = self.clock.now();
        if !(self.route)(self.group, input) {
            return Ok(false);
        }
        let len = u32::try_from(w.buf.len())
            .ok()
            .filter(|&n| n <= MAX_RECORD)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "input too large"))?;
        w.file.write_all(&len.to_le_bytes())?;
        w.file.write_all(&at.as_nanos().to_le_bytes())?;
        w.file.write_all(&w.buf)?;
        Ok(true)
    }

    /// Flushes buffered records to the file.
    pub fn flush(&self) -> io::Result<()> {
        self.out.lock().file.flush()
    }
}

/// Reads a journal record by record.
pub struct JournalReader<I> {
    input: BufReader<File>,
    offset: u64,
    _input: PhantomData<fn() -> I>,
}

impl<I> fmt::Debug for JournalReader<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JournalReader(at byte {})", self.offset)
    }
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` on a clean end before the
/// first byte, `Truncated` on an end after it.
fn read_full(r: &mut impl Read, buf: &mut [u8], offset: u64) -> Result<bool, JournalError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(JournalError {
                    offset,
                    kind: JournalErrorKind::Truncated,
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(JournalError {
                    offset,
                    kind: JournalErrorKind::Io(e),
                })
            }
        }
    }
    Ok(true)
}

impl<I: DeserializeOwned> JournalReader<I> {
    /// Opens a journal and checks its header.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        let file = File::open(path).map_err(|e| JournalError {
            offset: 0,
            kind: JournalErrorKind::Io(e),
        })?;
        let mut input = BufReader::new(file);
        let mut header = [0u8; 8];
        let bad = || JournalError {
            offset: 0,
            kind: JournalErrorKind::BadHeader,
        };
        if !read_full(&mut input, &mut header, 0).map_err(|_| bad())?
            || &header[..7] != MAGIC
            || header[7] != VERSION
        {
            return Err(bad());
        }
        Ok(JournalReader {
            input,
            offset: 8,
            _input: PhantomData,
        })
    }

    /// The next record, `Ok(None)` at a clean end of file.
    pub fn next_record(&mut self) -> Result<Option<(Time, I)>, JournalError> {
        let start = self.offset;
        let mut head = [0u8; 12];
        if !read_full(&mut self.input, &mut head, start)? {
            return Ok(None);
        }
        let len = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
        let at = u64::from_le_bytes(head[4..].try_into().expect("8 bytes"));
        if len > MAX_RECORD {
            return Err(JournalError {
                offset: start,
                kind: JournalErrorKind::BadLength(len),
            });
        }
        let mut payload = vec![0u8; len as usize];
        if !read_full(&mut self.input, &mut payload, start)? && len > 0 {
            return Err(JournalError {
                offset: start,
                kind: JournalErrorKind::Truncated,
            });
        }
        let input = postcard::from_bytes(&payload).map_err(|e| JournalError {
            offset: start,
            kind: JournalErrorKind::Decode(e.to_string()),
        })?;
        self.offset = start + 12 + u64::from(len);
        Ok(Some((Time::from_nanos(at), input)))
    }
}

impl<I: DeserializeOwned> Iterator for JournalReader<I> {
    type Item = Result<(Time, I), JournalError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

impl<G: GroupSpec> Simulation<G> {
    /// Replays a journal: for each record, moves virtual time to its arrival
    /// time, routes it exactly as [`Journaled::feed`] did, and settles.
    /// Returns how many inputs were replayed.
    pub fn replay<I: DeserializeOwned>(
        &mut self,
        journal: JournalReader<I>,
        route: Route<G, I>,
    ) -> Result<usize, JournalError> {
        let mut n = 0;
        for record in journal {
            let (at, input) = record?;
            self.advance_to(at);
            route(self.group(), input);
            self.settle();
            n += 1;
        }
        Ok(n)
    }
}
