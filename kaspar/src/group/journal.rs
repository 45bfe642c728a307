//! Journal and replay (feature `journal`): record what enters a live group,
//! with arrival times, and feed the same sequence to a [`Simulation`].
//!
//! Inputs are a type of the user's that opts in with serde
//! (`Serialize + DeserializeOwned`), usually an enum of the messages the
//! outside world sends the group, and a routing function that hands one
//! input to the right member. [`Journaled::feed`] stamps the input with the
//! group's clock, routes it, and appends it to the journal, all under one
//! lock, so the journal's order is the order the inputs entered the
//! group's queue even with several feeding threads.
//!
//! Timers are inputs too: a live timer fires at a moment the outside world
//! decides, relative to the inputs. While a [`Journaled`] exists, every
//! timer that fires into its group is recorded (under the same lock as the
//! inputs, so in the group's queue order), and [`Simulation::replay`] fires
//! the same timer exactly where the live run did, instead of by its
//! virtual due time. A live run with periodic timers therefore replays to
//! the same outputs, as an input-only one does.
//!
//! A record names its timer by a *tag*: the timer's place among the
//! timers the group's members armed, counting from 0 (a periodic timer
//! keeps its tag for every tick). Members arm timers in their handlers,
//! which run one at a time in the group's queue order, so a replay of the
//! same inputs arms the same timers under the same tags, whatever their
//! due times: a timer's due time counts from `ctx.now()` when a handler
//! armed it, which live is when the handler ran and in a replay the
//! input's recorded arrival, so two timers can be due in one order live
//! and in the other in the replay. A record fires only a timer of the
//! group, never one of an actor outside it ([`Simulation::spawn`]), whose
//! timers a replay does not fire at all (their live firings were not
//! recorded; [`Simulation::advance_to`] fires them after the replay, from
//! the simulation's start: see [`Simulation::starting_at`]).
//!
//! # File format
//!
//! A header, `KSPRJNL` and a format version byte (4), then records:
//! payload length (`u32`, little-endian), time in nanoseconds (`u64`,
//! little-endian), kind (`u8`: 0 an input, 1 a timer firing), and the
//! payload: the input encoded with postcard, or the timer's tag (`u64`,
//! little-endian). Older files are still read. Version 1 files (inputs
//! only, no kind byte) replay timers by due time. In versions 2 and 3 a
//! timer record's payload is empty, and its replay fires the group's
//! pending timer due first (the two due in another order live fire
//! swapped). Version 3 adds kind 2, an input a [`FlightRecorder`] handled
//! but could not keep (no payload); a flight recorder's dump is written
//! as version 2, or 3 if it holds one (its timer records are empty: a
//! recorder sees the message a timer queued, not the timer). A damaged or
//! truncated file is reported as a [`JournalError`] naming the byte
//! offset of the bad record; reading never panics on bad input.
//!
//! # Flight recorder
//!
//! [`FlightRecorder`] keeps the last N messages a running group (or actor)
//! handled and writes them out in this format on a handler's panic or on
//! request, for [`Simulation::replay`]; see its documentation for what a
//! replay of a window can and cannot show.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Cursor, Read, Write};
use std::marker::PhantomData;
use std::path::Path;

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::base::clock::{Clock, Time};
use crate::base::sync::Mutex;
use crate::delivery::flight::{
    header, record_head, HEAD_LEN, KIND_INPUT, KIND_LOST, KIND_TIMER, MAGIC, MAX_RECORD,
    VERSION_INPUTS_ONLY, VERSION_LOST, VERSION_TIMERS, VERSION_TIMER_TAGS as VERSION,
};
use crate::group::sim::Simulation;
use crate::group::{GroupSpec, TimerRecorder};

pub use crate::delivery::flight::{
    Encode, FlightDump, FlightRecord, FlightRecorder, DEFAULT_SLOT_BYTES,
};

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
    /// A record's kind byte is neither an input nor a timer.
    BadKind(u8),
    /// The record stands for an input a flight recorder handled but could
    /// not keep (too large for its slot, or its encoding failed): a replay
    /// cannot go past it and stay faithful.
    LostInput,
    /// Replay met a timer record, but the simulated group had no timer
    /// pending: the journal does not belong to this group (or its code
    /// changed since the recording).
    NoTimerPending,
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
            JournalErrorKind::BadKind(k) => {
                write!(f, "corrupt journal: record at byte {at} has kind {k}")
            }
            JournalErrorKind::LostInput => write!(
                f,
                "the input recorded at byte {at} was lost by the flight recorder (larger than its slot, or its encoding failed)"
            ),
            JournalErrorKind::NoTimerPending => write!(
                f,
                "replay diverged: the timer firing recorded at byte {at} has no pending timer to fire"
            ),
            JournalErrorKind::Io(e) => write!(f, "reading journal at byte {at}: {e}"),
        }
    }
}

impl std::error::Error for JournalError {}

/// A live group's input side, journaling every input it routes and every
/// timer that fires into the group while it exists.
pub struct Journaled<'g, G: GroupSpec, I> {
    group: &'g G,
    route: Route<G, I>,
    recorder: Arc<Recorder>,
}

/// The journal file, shared by the input side and the group's timer tap.
struct Recorder {
    clock: Clock,
    out: Mutex<Writer>,
}

struct Writer {
    file: BufWriter<File>,
    buf: Vec<u8>,
    /// The first write error; later records are not written after it.
    failed: Option<io::Error>,
    /// The `Journaled` was dropped: the journal is complete, and a timer
    /// that fires now (its tap looked up before the drop) is not recorded.
    closed: bool,
}

impl Writer {
    fn record(&mut self, at: Time, kind: u8) -> io::Result<()> {
        if let Some(e) = &self.failed {
            return Err(io::Error::new(e.kind(), e.to_string()));
        }
        let len = u32::try_from(self.buf.len())
            .ok()
            .filter(|&n| n <= MAX_RECORD)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "input too large"))?;
        let written = self
            .file
            .write_all(&record_head(len, at, kind))
            .and_then(|()| self.file.write_all(&self.buf));
        if let Err(e) = &written {
            self.failed = Some(io::Error::new(e.kind(), e.to_string()));
        }
        written
    }
}

impl TimerRecorder for Recorder {
    fn timer_fired(&self, timer: u64, push: &mut dyn FnMut() -> bool) {
        let mut out = self.out.lock();
        if out.closed {
            drop(out);
            push();
            return;
        }
        let at = self.clock.now();
        if !push() {
            // Nothing was queued (no room: the timer queue retries it, and
            // that firing is recorded when it queues).
            return;
        }
        out.buf.clear();
        out.buf.extend_from_slice(&timer.to_le_bytes());
        // A failed write is kept and reported by the next `feed` or
        // `flush`: the timer thread has no one to report it to.
        let _ = out.record(at, KIND_TIMER);
    }
}

impl<G: GroupSpec, I> fmt::Debug for Journaled<'_, G, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Journaled({})", G::NAME)
    }
}

impl<'g, G: GroupSpec, I: Serialize> Journaled<'g, G, I> {
    /// Creates (truncates) the journal file at `path`. `clock` stamps the
    /// arrivals: the clock the group's members read. From now until the
    /// `Journaled` is dropped, the group's timer firings are recorded too;
    /// create it before the group's first input and before its first timer
    /// can fire, or the replay misses what came before.
    pub fn create(
        path: impl AsRef<Path>,
        group: &'g G,
        clock: Clock,
        route: Route<G, I>,
    ) -> io::Result<Self> {
        let mut file = BufWriter::new(File::create(path)?);
        file.write_all(&header(VERSION))?;
        let recorder = Arc::new(Recorder {
            clock,
            out: Mutex::new(Writer {
                file,
                buf: Vec::new(),
                failed: None,
                closed: false,
            }),
        });
        group.tap().set(recorder.clone() as Arc<dyn TimerRecorder>);
        Ok(Journaled {
            group,
            route,
            recorder,
        })
    }

    /// Routes `input` into the group and journals it with its arrival time.
    /// Returns `Ok(false)` (and journals nothing) if the group refused it.
    pub fn feed(&self, input: I) -> io::Result<bool> {
        let mut out = self.recorder.out.lock();
        let w = &mut *out;
        w.buf.clear();
        let payload = postcard::to_extend(&input, std::mem::take(&mut w.buf))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        w.buf = payload;
        let at = self.recorder.clock.now();
        if !(self.route)(self.group, input) {
            return Ok(false);
        }
        w.record(at, KIND_INPUT)?;
        Ok(true)
    }

    /// Flushes buffered records to the file; reports a write that failed
    /// since (a timer firing's, say).
    pub fn flush(&self) -> io::Result<()> {
        let mut out = self.recorder.out.lock();
        if let Some(e) = &out.failed {
            return Err(io::Error::new(e.kind(), e.to_string()));
        }
        out.file.flush()
    }
}

impl<G: GroupSpec, I> Drop for Journaled<'_, G, I> {
    fn drop(&mut self) {
        // Timers fired after this are not recorded; the file is complete
        // up to here.
        let recorder: Arc<dyn TimerRecorder> = self.recorder.clone();
        self.group.tap().clear(&recorder);
        // A firing that took the tap just before still runs; under the
        // writer's lock it either recorded already or sees `closed`.
        let mut out = self.recorder.out.lock();
        out.closed = true;
        let _ = out.file.flush();
    }
}

/// One record of a journal.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Entry<I> {
    /// An input that entered the group at `at`.
    Input {
        /// When it entered the group's queue.
        at: Time,
        /// The input.
        input: I,
    },
    /// One of the group's timers fired into its queue at `at`.
    Timer {
        /// When it fired.
        at: Time,
        /// Which one: its place among the timers the group's members
        /// armed, counting from 0 (a periodic timer keeps its place).
        /// `None` in a journal that does not say (written before version
        /// 4, or a flight recorder's dump).
        timer: Option<u64>,
    },
    /// A flight recorder handled an input at `at` but could not keep it.
    Lost {
        /// When it was handled.
        at: Time,
    },
}

/// Reads a journal record by record.
pub struct JournalReader<I> {
    input: BufReader<Box<dyn Read + Send>>,
    offset: u64,
    version: u8,
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
        Self::from_reader(file)
    }

    /// Reads a journal held in memory (a [`FlightDump`]'s bytes, say) and
    /// checks its header.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Result<Self, JournalError> {
        Self::from_reader(Cursor::new(bytes.into()))
    }

    /// Reads a journal from `source` and checks its header.
    pub fn from_reader(source: impl Read + Send + 'static) -> Result<Self, JournalError> {
        let mut input = BufReader::new(Box::new(source) as Box<dyn Read + Send>);
        let mut header = [0u8; 8];
        let bad = || JournalError {
            offset: 0,
            kind: JournalErrorKind::BadHeader,
        };
        if !read_full(&mut input, &mut header, 0).map_err(|_| bad())?
            || &header[..7] != MAGIC
            || !(VERSION_INPUTS_ONLY..=VERSION).contains(&header[7])
        {
            return Err(bad());
        }
        Ok(JournalReader {
            input,
            offset: 8,
            version: header[7],
            _input: PhantomData,
        })
    }

    /// Whether the journal records timer firings (version 2 on), so that a
    /// replay fires timers where they fired live.
    pub fn records_timers(&self) -> bool {
        self.version >= VERSION_TIMERS
    }

    /// Whether its timer records say which timer fired (version 4 on): a
    /// replay then fires that one, not the one due first.
    pub fn names_timers(&self) -> bool {
        self.version >= VERSION
    }

    /// The next input, skipping timer records; `Ok(None)` at a clean end
    /// of file. A lost input is an error ([`JournalErrorKind::LostInput`]),
    /// not skipped.
    pub fn next_record(&mut self) -> Result<Option<(Time, I)>, JournalError> {
        loop {
            let offset = self.offset;
            match self.next_entry()? {
                None => return Ok(None),
                Some(Entry::Input { at, input }) => return Ok(Some((at, input))),
                Some(Entry::Timer { .. }) => {}
                Some(Entry::Lost { .. }) => {
                    return Err(JournalError {
                        offset,
                        kind: JournalErrorKind::LostInput,
                    })
                }
            }
        }
    }

    /// The next record of either kind; `Ok(None)` at a clean end of file.
    pub fn next_entry(&mut self) -> Result<Option<Entry<I>>, JournalError> {
        let start = self.offset;
        let head_len = if self.records_timers() {
            HEAD_LEN
        } else {
            HEAD_LEN - 1
        };
        let mut head = [0u8; HEAD_LEN];
        if !read_full(&mut self.input, &mut head[..head_len], start)? {
            return Ok(None);
        }
        let len = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
        let at = Time::from_nanos(u64::from_le_bytes(head[4..12].try_into().expect("8 bytes")));
        let kind = if self.records_timers() {
            head[12]
        } else {
            KIND_INPUT
        };
        let known = kind == KIND_INPUT
            || kind == KIND_TIMER
            || (kind == KIND_LOST && self.version >= VERSION_LOST);
        if !known {
            return Err(JournalError {
                offset: start,
                kind: JournalErrorKind::BadKind(kind),
            });
        }
        // A timer record holds its timer's tag from version 4 on, and
        // nothing before.
        let timer_len = if self.names_timers() { 8 } else { 0 };
        if len > MAX_RECORD || (kind == KIND_TIMER && len != timer_len) {
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
        self.offset = start + head_len as u64 + u64::from(len);
        if kind == KIND_TIMER {
            let timer = payload
                .get(..8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
            return Ok(Some(Entry::Timer { at, timer }));
        }
        if kind == KIND_LOST {
            return Ok(Some(Entry::Lost { at }));
        }
        let input = postcard::from_bytes(&payload).map_err(|e| JournalError {
            offset: start,
            kind: JournalErrorKind::Decode(e.to_string()),
        })?;
        Ok(Some(Entry::Input { at, input }))
    }
}

impl<I: DeserializeOwned> Iterator for JournalReader<I> {
    type Item = Result<(Time, I), JournalError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

impl<G: GroupSpec> Simulation<G> {
    /// Replays a journal: for each input, moves virtual time to its
    /// arrival time, routes it exactly as [`Journaled::feed`] did, and
    /// settles; for each timer record, moves virtual time there and fires
    /// the group's timer the record names (a version 2 or 3 record names
    /// none: the group's pending timer due first), and settles. Timers
    /// fire only where the journal says, never by due time, and never an
    /// outside actor's (see the module docs).
    /// (A version 1 journal, which has no timer records, fires timers by
    /// due time as it goes.) Returns how many inputs were replayed. A lost
    /// input (in a flight recorder's dump) stops the replay with
    /// [`JournalErrorKind::LostInput`]: what follows it would not be
    /// faithful.
    pub fn replay<I: DeserializeOwned>(
        &mut self,
        mut journal: JournalReader<I>,
        route: Route<G, I>,
    ) -> Result<usize, JournalError> {
        let by_record = journal.records_timers();
        // What was queued before the journal began (wiring, say) was
        // handled before anything the journal recorded could happen.
        self.settle();
        let mut n = 0;
        loop {
            let offset = journal.offset;
            match journal.next_entry()? {
                None => return Ok(n),
                Some(Entry::Input { at, input }) => {
                    if by_record {
                        self.move_clock_to(at);
                    } else {
                        self.advance_to(at);
                    }
                    route(self.group(), input);
                    self.settle();
                    n += 1;
                }
                Some(Entry::Lost { .. }) => {
                    return Err(JournalError {
                        offset,
                        kind: JournalErrorKind::LostInput,
                    })
                }
                Some(Entry::Timer { at, timer }) => {
                    self.move_clock_to(at);
                    if !self.fire_recorded(timer) {
                        return Err(JournalError {
                            offset,
                            kind: JournalErrorKind::NoTimerPending,
                        });
                    }
                    self.settle();
                }
            }
        }
    }
}
