//! The flight recorder (feature `journal`): the last N messages a group or
//! an actor handled from its queue, kept in a ring allocated before it
//! runs, and
//! written out as a journal that [`Simulation::replay`] reads, on a
//! handler's panic or on request.
//!
//! The run loop records a message just before it serves it: the user's
//! encoder, a plain `fn(&Msg, FlightRecord)`, decides whether the message
//! is an input (and writes it with postcard into the slot), a timer
//! firing, or neither (a message one member sent another, which a replay
//! produces again by itself). Recording takes the ring's lock, which only
//! a dump contends for, and allocates nothing; a message too large for its
//! slot is kept as a lost record and counted.
//!
//! [`Simulation::replay`]: crate::Simulation::replay

mod dump;
mod format;
mod ring;

pub use dump::FlightDump;
pub(crate) use format::*;

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use serde::Serialize;

use crate::actor::cell::ActorCell;
use crate::actor::packed::{Plain, Stored};
use crate::actor::restart::handler_panics_here;
use crate::actor::traits::Actor;
use crate::base::clock::{Clock, Time};
use crate::base::sync::Mutex;
use crate::delivery::run_loop;
use crate::failure::quietly;
use ring::{Outcome, Ring};

/// What a flight recorder keeps per slot unless told otherwise.
pub const DEFAULT_SLOT_BYTES: usize = 256;

/// How a recorder turns a handled message into a journal record: called
/// with every message the group or actor takes from its queue, before its
/// handler runs. It records the message as an input
/// ([`FlightRecord::input`]), as a timer firing ([`FlightRecord::timer`]),
/// or not at all (it returns without using the record).
pub type Encode<M> = fn(&M, FlightRecord<'_>);

/// Where a panic dump goes.
type PanicSink = Arc<dyn Fn(&FlightDump) + Send + Sync>;

/// A flight recorder: the last `capacity` inputs a group (or a standalone
/// actor) handled from its queue, in a ring allocated when the recorder is
/// made, turned into a journal on request ([`dump`](Self::dump)) or
/// automatically when a handler panics ([`on_panic`](Self::on_panic),
/// [`on_panic_write`](Self::on_panic_write)).
///
/// `M` is the message enum the group or actor queues: `G::Msg` for a
/// group (one variant per member, holding that member's enum), `A::Msg`
/// for an actor. Attach it at spawn, with `GroupSpawn::flight_recorder` or
/// `Spawn::flight_recorder`; a recorder records for one group or actor,
/// and counts as attached from that call on (a spawn dropped unstarted
/// keeps it). Clones share the recorder: keep one to dump from.
///
/// # Cost
///
/// Per message served from the queue: the ring's lock (uncontended but for
/// a dump), the encoder, and for a recorded input its postcard encoding
/// into the slot; per batch, one clock read. Nothing is allocated: a message whose
/// encoding does not fit the slot is kept as a *lost* record and counted
/// ([`lost`](Self::lost)). A group or actor spawned without a recorder
/// pays nothing per message; with the feature off, nothing at all.
///
/// # What is recorded, and what a replay can show
///
/// A record is a message taken from the queue. Synchronous deliveries
/// (`fast_send` from another thread) never pass through the queue and are
/// not recorded; a member's sends to another member are handled from the
/// queue but are not inputs, and the encoder should skip them (the replay
/// sends them again). The dump is a journal like the one `Journaled`
/// writes, read by `JournalReader` and replayed by `Simulation::replay`
/// with the same route, except that each record is stamped with the time
/// its batch was taken from the queue (every record of a batch has the
/// same time), not when it entered the queue.
///
/// A ring forgets: once more than `capacity` records were taken, the state
/// the group had when the oldest kept one was handled is not in the dump.
/// [`FlightDump::from_start`] says which case a dump is:
///
/// * **From the start**: the replay, from the members' initial states, is
///   the live run's inputs in the live run's order, and a deterministic
///   group reproduces it (with the limits of any journal replay).
/// * **A window**: the replay starts from whatever state the simulation is
///   given: fresh initial states, or a state the user rebuilds. It
///   reproduces a failure whose cause lies inside the window (the inputs
///   since the last reset, say) and proves nothing about one whose cause
///   came before. Timers the group had pending when the window began are
///   not pending in a fresh simulation either.
pub struct FlightRecorder<M> {
    shared: Arc<Shared<M>>,
}

struct Shared<M> {
    encode: Encode<M>,
    ring: Mutex<Recording>,
    attached: AtomicBool,
    on_panic: Mutex<Option<PanicSink>>,
    /// Handler panics seen while serving a recorded message.
    panics: AtomicU64,
    /// The last error of an `on_panic_write` dump.
    write_error: Arc<Mutex<Option<io::Error>>>,
}

/// The ring and the clock that stamps its records, under one lock.
struct Recording {
    ring: Ring,
    /// The clock of the group or actor recorded (set when attached).
    clock: Clock,
}

impl<M> Clone for FlightRecorder<M> {
    fn clone(&self) -> Self {
        FlightRecorder {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<M> fmt::Debug for FlightRecorder<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ring = &self.shared.ring.lock().ring;
        f.debug_struct("FlightRecorder")
            .field("capacity", &ring.capacity())
            .field("slot_bytes", &ring.slot_len())
            .field("recorded", &ring.taken())
            .field("lost", &ring.lost())
            .finish()
    }
}

impl<M> FlightRecorder<M> {
    /// A recorder that keeps the last `capacity` records, each in a slot of
    /// [`DEFAULT_SLOT_BYTES`]; the ring is allocated here, once.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0.
    #[track_caller]
    pub fn new(capacity: usize, encode: Encode<M>) -> Self {
        Self::with_slot_bytes(capacity, DEFAULT_SLOT_BYTES, encode)
    }

    /// A recorder whose slots hold `slot_bytes` bytes of encoded input
    /// each: size it for the largest input you need to replay.
    ///
    /// # Panics
    ///
    /// If `capacity` or `slot_bytes` is 0, or the ring would not fit in
    /// memory (`capacity * slot_bytes` overflows `isize`).
    #[track_caller]
    pub fn with_slot_bytes(capacity: usize, slot_bytes: usize, encode: Encode<M>) -> Self {
        assert!(
            capacity > 0,
            "kaspar: a flight recorder keeps at least one record (capacity 0)"
        );
        assert!(
            slot_bytes > 0,
            "kaspar: a flight recorder's slot holds at least one byte (slot_bytes 0)"
        );
        assert!(
            capacity
                .checked_mul(slot_bytes)
                .is_some_and(|n| n <= isize::MAX as usize),
            "kaspar: a flight recorder of {capacity} slots of {slot_bytes} bytes does not fit in memory"
        );
        FlightRecorder {
            shared: Arc::new(Shared {
                encode,
                ring: Mutex::new(Recording {
                    ring: Ring::new(capacity, slot_bytes),
                    clock: Clock::System,
                }),
                attached: AtomicBool::new(false),
                on_panic: Mutex::new(None),
                panics: AtomicU64::new(0),
                write_error: Arc::new(Mutex::new(None)),
            }),
        }
    }

    /// Calls `sink` with a dump each time a handler panics while the group
    /// or actor serves a recorded message (its own handler, or one it
    /// called with `fast_send` on its thread). The sink runs on the group's
    /// or actor's thread, which holds the group's (actor's) lock: it must
    /// not call into the group, and the group waits until it returns. A
    /// panic in the sink is caught. Replaces any earlier sink.
    pub fn on_panic(&self, sink: impl Fn(&FlightDump) + Send + Sync + 'static) {
        *self.shared.on_panic.lock() = Some(Arc::new(sink));
    }

    /// [`on_panic`](Self::on_panic) with a sink that writes the dump to
    /// `path` (see [`FlightDump::write_to`]): each panic replaces the file
    /// with the newest dump. A write that fails is kept for
    /// [`take_write_error`](Self::take_write_error).
    pub fn on_panic_write(&self, path: impl Into<PathBuf>) {
        let path = path.into();
        let failed = Arc::clone(&self.shared.write_error);
        self.on_panic(move |dump| {
            if let Err(e) = dump.write_to(&path) {
                *failed.lock() = Some(e);
            }
        });
    }

    /// The error of the last dump [`on_panic_write`](Self::on_panic_write)
    /// failed to write, if any since the last call.
    pub fn take_write_error(&self) -> Option<io::Error> {
        self.shared.write_error.lock().take()
    }

    /// The journal of the records the ring holds now, oldest first. Taken
    /// between two messages: never half of one.
    pub fn dump(&self) -> FlightDump {
        FlightDump::of(&self.shared.ring.lock().ring)
    }

    /// How many records the ring holds at most.
    pub fn capacity(&self) -> usize {
        self.shared.ring.lock().ring.capacity()
    }

    /// Records taken so far (inputs, timer firings and lost ones; not the
    /// messages the encoder skipped).
    pub fn recorded(&self) -> u64 {
        self.shared.ring.lock().ring.taken()
    }

    /// Records taken so far that were lost: too large for a slot, or their
    /// encoding failed (or panicked).
    pub fn lost(&self) -> u64 {
        self.shared.ring.lock().ring.lost()
    }

    /// Handler panics seen so far while a recorded message was served.
    pub fn panics(&self) -> u64 {
        self.shared.panics.load(Relaxed)
    }

    /// Attaches the recorder to the group or actor being spawned, which
    /// reads `clock`.
    ///
    /// # Panics
    ///
    /// If it was attached before: one recorder records one group or actor
    /// (two interleaved in one ring would replay as neither).
    #[track_caller]
    pub(crate) fn attach(&self, clock: Clock, to: &str) {
        assert!(
            !self.shared.attached.swap(true, Relaxed),
            "kaspar: this flight recorder already records another group or actor; make one per {to}"
        );
        self.shared.ring.lock().clock = clock;
    }

    /// Records `msg` (if the encoder takes it), stamped with `stamp`, the
    /// batch's time, read from the clock by the batch's first record.
    #[inline]
    fn record(&self, msg: &M, stamp: &mut Option<Time>) {
        let shared = &*self.shared;
        let encode = shared.encode;
        let mut recording = shared.ring.lock();
        let Recording { ring, clock } = &mut *recording;
        ring.take(
            || *stamp.get_or_insert_with(|| clock.now()),
            |slot| {
                let mut outcome = Outcome::Skip;
                // The encoder and the input's `Serialize` are the user's:
                // a panic in them loses this record, never the group.
                quietly(|| encode(msg, FlightRecord::new(slot, &mut outcome)))
                    .map_or(Outcome::Lost, |()| outcome)
            },
        );
    }

    /// A handler panicked while a recorded message was served.
    #[cold]
    #[inline(never)]
    fn panicked(&self) {
        self.shared.panics.fetch_add(1, Relaxed);
        let sink = self.shared.on_panic.lock().clone();
        if let Some(sink) = sink {
            let dump = self.dump();
            quietly(|| sink(&dump));
        }
    }

    /// Serves a batch taken from the queue, from the back (see
    /// `run_loop::serve`), recording each message just before `serve`
    /// runs it (`serve` is told whether it is the batch's first); dumps
    /// when a handler panicked on this thread meanwhile.
    #[inline]
    pub(crate) fn serve_batch(&self, batch: &mut Vec<M>, serve: impl FnMut(M, bool)) {
        self.serve_stored(batch, |msg| msg, serve);
    }

    /// [`serve_batch`](Self::serve_batch) of a batch as a mailbox stores
    /// it, each message `load`ed before it is recorded.
    #[inline]
    pub(crate) fn serve_stored<S>(
        &self,
        batch: &mut Vec<S>,
        load: impl Fn(S) -> M,
        mut serve: impl FnMut(M, bool),
    ) {
        let mut first = true;
        // One clock read per batch: a read costs more than the rest of a
        // record together (tens of nanoseconds, more on a VM).
        let mut stamp = None;
        while let Some(msg) = batch.pop().map(&load) {
            self.record(&msg, &mut stamp);
            let panics = handler_panics_here();
            serve(msg, first);
            first = false;
            if handler_panics_here() != panics {
                self.panicked();
            }
        }
    }
}

/// `run_loop::serve` for an actor with a flight recorder.
pub(crate) fn serve_recorded<A: Actor>(
    cell: &Arc<ActorCell<A>>,
    flight: &FlightRecorder<A::Msg>,
    batch: &mut Vec<Stored<A>>,
) {
    let mut held = cell.hold();
    batch.reverse();
    flight.serve_stored(batch, Stored::load, |msg, first| {
        if !first {
            held.bump(|| cell.target());
        }
        run_loop::serve_one(cell, &held, Plain(msg));
    });
}

/// What the encoder writes one message as; see [`Encode`]. Dropping it
/// unused records nothing.
pub struct FlightRecord<'a> {
    slot: &'a mut [u8],
    outcome: &'a mut Outcome,
}

impl fmt::Debug for FlightRecord<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FlightRecord({} bytes)", self.slot.len())
    }
}

impl<'a> FlightRecord<'a> {
    fn new(slot: &'a mut [u8], outcome: &'a mut Outcome) -> Self {
        FlightRecord { slot, outcome }
    }

    /// Records the message as `input`, the value the replay's route will
    /// receive: encoded with postcard straight into the slot. `T` need
    /// not be the replay's input type, only encode as it does; serde
    /// encodes `&X` as `X`, so an enum of references with the input
    /// type's variants, in its order, records a message without cloning
    /// it. An input that does not fit the slot (or fails to encode) is
    /// recorded as lost.
    pub fn input<T: Serialize + ?Sized>(self, input: &T) {
        *self.outcome = match postcard::to_slice(input, self.slot) {
            Ok(used) => Outcome::Input(used.len()),
            Err(_) => Outcome::Lost,
        };
    }

    /// Records the message as a timer firing: the replay fires the
    /// simulated group's next pending timer here. The record is taken
    /// when the firing is handled, not when it was queued: a firing handled
    /// after an input that cancelled its timer replays as
    /// `NoTimerPending`.
    pub fn timer(self) {
        *self.outcome = Outcome::Timer;
    }
}
