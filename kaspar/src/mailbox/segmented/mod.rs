//! `SegmentedMpsc`: an unbounded lock-free queue of linked blocks, in the
//! shape of crossbeam-channel's list flavour (after Vyukov's unbounded
//! MPSC queue), specialised to one consumer and recycling its blocks.
//!
//! Algorithm. Messages live in blocks of `BLOCK_CAP` slots linked into a
//! chain. Positions count up forever; each block serves one *lap* of `LAP =
//! BLOCK_CAP + 1` positions, position `p` being slot `p % LAP` of its lap's
//! block. The last position of a lap (`p % LAP == BLOCK_CAP`) holds no
//! message: the tail sits there while the next block is being installed.
//!
//! * A producer reads `tail.index` (the next position to reserve) and
//!   `tail.block`, and reserves the position with one compare-and-swap on
//!   the index. It writes the message into the slot and publishes it by
//!   storing the slot's `stamp = p + 1`. The producer that reserves a
//!   block's last slot first installs the next block: it takes one from the
//!   free stack (or allocates one if the stack is empty), stores it as
//!   `tail.block`, moves the index past the lap's end, and links it as the
//!   old block's `next`, in that order.
//! * The consumer keeps its position and block to itself. It takes a slot
//!   when its stamp is `head + 1`, reading nothing the producers write but
//!   the slots themselves: no read-modify-write, and no look at the tail
//!   while it takes messages or polls for the next one (it polls that
//!   slot). Having taken a block's last slot it follows `next` and pushes
//!   the spent block onto the free stack. Producers, for their part, read
//!   the consumer's line once per block (see `head_seen`).
//!
//! The free stack is what makes the steady state allocate nothing: a block
//! is allocated only when the stack is empty, i.e. when more messages are
//! queued than every block allocated so far can hold. Like `BQueue`'s
//! overflow, a mailbox keeps room for its largest backlog, unless its
//! consumer gives the spare blocks back ([`trim`](SegmentedMpsc::trim):
//! a pooled actor's mailbox does when the actor goes idle). The stack is
//! LIFO, so the block reused next is the one the consumer just left,
//! still warm in its cache.
//!
//! As in [`LockFreeMpsc`](super::LockFreeMpsc), `tail.index` carries the
//! flags `SLEEPING` and `CLOSED` in its low bits: the reservation that
//! clears `SLEEPING` is the one whose producer unparks the consumer, and no
//! reservation slips past a close.
//!
//! Invariants (each `unsafe` block names the one it relies on):
//! * **G1 (exclusive write).** Only the producer whose CAS moved
//!   `tail.index` from `p` writes slot `p % LAP` of `p`'s block, once.
//!   `tail.block` is stored before the index enters a lap, and read after
//!   it (Acquire), and the index never revisits a value (S5 below), so a
//!   CAS that succeeds proves the block it read is the lap's.
//! * **G2 (initialised read).** The consumer reads a slot only when its
//!   stamp is `p + 1`, stored with `Release` after the write; stamps from a
//!   block's earlier laps are other positions' and never match.
//! * **G3 (single consumer).** The head position and block, and every read
//!   of a slot's value, are touched only while holding `consuming`.
//! * **G4 (live blocks).** A block is freed only by `Drop`, or, while on
//!   the free stack, by the consumer's trim (which holds G5's pop). A producer
//!   dereferences a block only after its CAS reserved a slot in it, and is
//!   done with it once it stores that slot's stamp; the installer links
//!   `next` before it writes its own (last) slot. So when the consumer has
//!   taken a block's last slot, no producer will touch that block again
//!   and the consumer owns it, to push on the free stack.
//! * **G5 (one popper).** The free stack is popped by one thread at a
//!   time, which holds its `popping` flag: the installer (installers are
//!   serialised: the next one can reserve only after this one moved the
//!   index past the lap's end), or the consumer trimming, which the
//!   installer does not wait for (it allocates instead). With a single
//!   popper a Treiber stack has no ABA: the top cannot be popped and
//!   pushed back between the popper's read and its CAS; and a trim frees
//!   no block a pop is reading.
//! * **S5 (one position space).** As in `LockFreeMpsc`: positions wrap at
//!   `POS_MASK + 1`, a multiple of `LAP`, and every sum and difference is
//!   masked. A stale stamp could match only if a block went unused for the
//!   whole space (2^30 positions on 32-bit targets), impossible while the
//!   stack reuses its blocks in turn.
//!
//! Not lock-free in two places, both short: a producer that finds the tail
//! at a lap's end waits for the installer, and a consumer that finds its
//! next slot reserved but unwritten waits for that producer.

mod block;

use crossbeam_utils::CachePadded;

use super::park::{self, Polls, Wake};
use super::{Drained, IdleWait, Polled};
use crate::base::backoff::Backoff;
use crate::base::sync::{thread, AtomicBool, AtomicPtr, AtomicUsize, Ordering, UnsafeCell};
use crate::error::SendError;
use block::{Block, FreeStack, BLOCK_CAP, LAP};

/// The consumer is parked, or about to park.
const SLEEPING: usize = 1;
/// `close` was called; no reservation succeeds any more.
const CLOSED: usize = 2;
/// Spare blocks a pooled consumer's queue keeps at least when it goes idle
/// ([`SegmentedMpsc::trim`]): the one its next install takes, so that
/// messages trickling in allocate nothing.
pub(crate) const KEEP_SPARE: usize = 1;
/// `tail.index >> SHIFT` is the next position to reserve.
const SHIFT: u32 = 2;
/// Positions wrap at `POS_MASK + 1` (S5).
const POS_MASK: usize = usize::MAX >> SHIFT;

#[inline(always)]
fn pos_add(a: usize, b: usize) -> usize {
    a.wrapping_add(b) & POS_MASK
}

#[inline(always)]
fn pos_sub(a: usize, b: usize) -> usize {
    a.wrapping_sub(b) & POS_MASK
}

/// Messages at positions `from..to`: the distance less the lap ends in
/// between. Zero if `to` is behind `from` (a stale `from`).
#[inline]
fn count(from: usize, to: usize) -> usize {
    let d = pos_sub(to, from);
    if d > POS_MASK / 2 {
        return 0;
    }
    d - pos_sub(to & !(LAP - 1), from & !(LAP - 1)) / LAP
}

/// The producers' side, on its own cache line.
struct Tail<T> {
    /// Bits 0–1: `SLEEPING`, `CLOSED`. Bits 2..: the next position to
    /// reserve.
    index: AtomicUsize,
    /// The block of the lap `index` is in (G1).
    block: AtomicPtr<Block<T>>,
    /// The consumer's position as the last installer read it: the base
    /// of the length a push reports, so that a push reads no line the
    /// consumer writes. Behind the real head, so the length is an upper
    /// bound; refreshed once per block, so by at most a block's worth
    /// above the real high-water mark.
    head_seen: AtomicUsize,
}

/// The consumer's side, on its own cache line.
struct Head<T> {
    /// The next position to take. Written by the holder of `consuming`,
    /// once per drain; read by producers for the length they report.
    index: AtomicUsize,
    /// The block `index` is in; only the holder of `consuming` touches it.
    block: UnsafeCell<*mut Block<T>>,
    /// Held while a thread runs the consumer side (G3).
    consuming: AtomicBool,
    /// Set by `close` after it set `CLOSED` in `tail.index`: what a
    /// polling consumer reads instead of the producers' line.
    closed: AtomicBool,
    /// Spare blocks a pooled consumer keeps when it goes idle: those it
    /// was made with (its capacity), and at least [`KEEP_SPARE`].
    keep: usize,
}

/// An unbounded lock-free queue of recycled blocks: one compare-and-swap
/// reserves a slot; the consumer takes messages without any
/// read-modify-write.
pub struct SegmentedMpsc<T> {
    tail: CachePadded<Tail<T>>,
    head: CachePadded<Head<T>>,
    /// Spent blocks, for the installer to reuse (G5).
    free: FreeStack<T>,
    /// Blocks the queue holds: allocated, and not given back by a trim.
    blocks: AtomicUsize,
    pub(super) wake: Wake,
}

// SAFETY: the queue owns its messages and moves them from producer threads
// to the consumer thread, never handing out `&T`; the raw block pointers
// are owned by the queue (G4). So `T: Send` is all sending and sharing it
// need; concurrent access to slot values is ruled out by G1–G3.
unsafe impl<T: Send> Send for SegmentedMpsc<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for SegmentedMpsc<T> {}

impl<T> std::fmt::Debug for SegmentedMpsc<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentedMpsc")
            .field("len", &self.len())
            .field("blocks", &self.blocks())
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// The consumer side while a drain runs: writes the position back and
/// releases `consuming` when the drain ends, even by a panic.
struct Draining<'a, T> {
    head: &'a Head<T>,
    index: usize,
    block: *mut Block<T>,
}

impl<T> Drop for Draining<'_, T> {
    fn drop(&mut self) {
        let block = self.block;
        // SAFETY: G3: we hold `consuming` until the store below.
        self.head.block.with_mut(|b| unsafe { *b = block });
        self.head.index.store(self.index, Ordering::Relaxed);
        // Release: this drain's reads happen-before the next drain.
        self.head.consuming.store(false, Ordering::Release);
    }
}

impl<T> SegmentedMpsc<T> {
    /// An empty queue with room for `capacity` messages allocated up front
    /// (rounded up to whole blocks of 31, at least one block); it grows by
    /// a block whenever more are queued at once, and keeps what it grew,
    /// unless its consumer is pooled: that one gives back what it grew
    /// beyond `capacity` (and a spare block) each time it goes idle.
    pub fn new(capacity: usize) -> Self {
        Self::starting_at(0, capacity)
    }

    /// A queue whose first position is `start`, rounded down to a lap
    /// (tests start just before the position space wraps, S5).
    fn starting_at(start: usize, capacity: usize) -> Self {
        let start = start & POS_MASK & !(LAP - 1);
        let first = Block::alloc();
        let q = SegmentedMpsc {
            tail: CachePadded::new(Tail {
                index: AtomicUsize::new(start << SHIFT),
                block: AtomicPtr::new(first),
                head_seen: AtomicUsize::new(start),
            }),
            head: CachePadded::new(Head {
                index: AtomicUsize::new(start),
                block: UnsafeCell::new(first),
                consuming: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                keep: capacity
                    .div_ceil(BLOCK_CAP)
                    .saturating_sub(1)
                    .max(KEEP_SPARE),
            }),
            free: FreeStack::new(),
            blocks: AtomicUsize::new(1),
            wake: Wake::default(),
        };
        for _ in 1..capacity.div_ceil(BLOCK_CAP) {
            q.blocks.fetch_add(1, Ordering::Relaxed);
            // SAFETY: new, so ours alone.
            unsafe { q.free.push(Block::alloc()) };
        }
        q
    }

    /// Appends `msg`; returns the length after the push (an upper bound).
    /// Never full: hands the message back only once closed.
    #[inline(always)]
    pub fn push(&self, msg: T) -> Result<usize, SendError<T>> {
        let (len, asleep) = self.push_quiet(msg)?;
        if asleep {
            self.wake.wake();
        }
        Ok(len)
    }

    /// [`push`](Self::push), leaving the wake-up to the caller: also
    /// returns whether this push found the consumer asleep (or idle), and
    /// so owes it the one wake-up of its sleep. A queue whose consumer's
    /// wake-up lives elsewhere (a `CompactMpsc`'s lane) pushes with this.
    #[inline(always)]
    pub(super) fn push_quiet(&self, msg: T) -> Result<(usize, bool), SendError<T>> {
        let mut t = self.tail.index.load(Ordering::Acquire);
        loop {
            if t & CLOSED != 0 {
                return Err(SendError::closed(msg));
            }
            let pos = t >> SHIFT;
            let offset = pos % LAP;
            if offset == BLOCK_CAP {
                t = self.wait_for_install();
                continue;
            }
            // After the Acquire load of the index that entered this lap,
            // so at least this lap's block (G1).
            let block = self.tail.block.load(Ordering::Acquire);
            // Drops `SLEEPING`: if it was set, this reservation takes the
            // duty to unpark. Acquire on failure, to read the block of
            // whatever lap the new index is in.
            match self.tail.index.compare_exchange_weak(
                t,
                pos_add(pos, 1) << SHIFT,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if offset + 1 == BLOCK_CAP {
                        self.install(block);
                    }
                    // SAFETY: G1 (the CAS reserved `pos`, so `block` is its
                    // lap's block) and G4 (a block with a reserved,
                    // unwritten slot is live).
                    let slot = unsafe { &(*block).slots[offset] };
                    slot.value.with_mut(|p| {
                        // SAFETY: G1: we are this slot's only writer for
                        // position `pos`, and the consumer does not read it
                        // before the stamp below.
                        unsafe { (*p).write(msg) };
                    });
                    // Release publishes the write (G2).
                    slot.stamp.store(pos_add(pos, 1), Ordering::Release);
                    let head = self.tail.head_seen.load(Ordering::Relaxed);
                    return Ok((count(head, pos_add(pos, 1)), t & SLEEPING != 0));
                }
                Err(actual) => t = actual,
            }
        }
    }

    /// Waits while the tail sits at a lap's end, and returns the index
    /// that moved past it (or that carries `CLOSED`).
    ///
    /// The producer of the lap's last slot is installing the next block;
    /// it has nothing left to wait for, and is most likely running on
    /// another core, a few dozen nanoseconds from done: spin first.
    /// Yielding at once sent this producer to the back of the run queue
    /// behind every other producer: with 32 of them on 2 cores, a fan-in
    /// push p99 of 25-67 us, against 0.2-1.5 us for the locked queues.
    #[cold]
    #[inline(never)]
    fn wait_for_install(&self) -> usize {
        let mut lap_end = Backoff::new();
        loop {
            if !lap_end.snooze() {
                thread::yield_now();
            }
            let t = self.tail.index.load(Ordering::Acquire);
            if t & CLOSED != 0 || (t >> SHIFT) % LAP != BLOCK_CAP {
                return t;
            }
        }
    }

    /// Installs the block after `block`, whose last slot the caller just
    /// reserved: the tail sits at the lap's end until this returns.
    #[inline(never)]
    fn install(&self, block: *mut Block<T>) {
        // SAFETY: G5: we are the one installer; blocks live until `Drop`.
        let next = match unsafe { self.free.pop() } {
            Some(next) => next,
            None => {
                self.blocks.fetch_add(1, Ordering::Relaxed);
                Block::alloc()
            }
        };
        // Once per block, the one read of the consumer's line a producer
        // makes.
        let head = self.head.index.load(Ordering::Relaxed);
        self.tail.head_seen.store(head, Ordering::Relaxed);
        // Release: the block's (reset) `next` and its slots' stamps are
        // visible to producers that read it after the index below.
        self.tail.block.store(next, Ordering::Release);
        // From the lap's end to the next lap's first slot; an add keeps
        // the flags (the consumer cannot be asleep here: a slot is
        // reserved and unwritten).
        self.tail.index.fetch_add(1 << SHIFT, Ordering::Release);
        // SAFETY: G4: `block` holds our reserved, unwritten slot. Release:
        // the consumer reads `next` after our slot's stamp, which we store
        // after this.
        unsafe { (*block).next.store(next, Ordering::Release) };
    }

    /// Moves up to `max` messages into `out` (at least one when any is
    /// published), waiting per `idle` while empty and open.
    ///
    /// While it waits, the consumer polls its next slot and its own
    /// `closed` flag, never the producers' tail: a read of the tail would
    /// make the next reservation's compare-and-swap wait for the line.
    pub fn pop_batch(&self, out: &mut Vec<T>, max: usize, idle: IdleWait) -> Drained {
        let max = max.max(1);
        let mut at = self.consume();
        let mut polls = Polls::new(idle);
        loop {
            let n = self.drain(&mut at, out, max);
            if n > 0 {
                return Drained::Got(n);
            }
            if self.head.closed.load(Ordering::Acquire) {
                // `CLOSED` is set: no reservation comes after the ones
                // already made. Wait for those, then report the end.
                if self.tail.index.load(Ordering::Acquire) >> SHIFT == at.index {
                    return Drained::Closed;
                }
                thread::yield_now();
                continue;
            }
            if polls.until(|| self.published(&at) || self.head.closed.load(Ordering::Relaxed)) {
                continue;
            }
            // Every later reservation's CAS sees this bit.
            let prev = self.tail.index.fetch_or(SLEEPING, Ordering::AcqRel);
            if prev >> SHIFT != at.index || prev & CLOSED != 0 {
                self.tail.index.fetch_and(!SLEEPING, Ordering::AcqRel);
                // Reserved, maybe not yet written: let its producer run.
                thread::yield_now();
                continue;
            }
            park::sleep(|| self.wake.parker.park());
        }
    }

    /// The pooled consumer's drain: moves up to `max` published messages
    /// into `out` without waiting; with none, reports the queue closed and
    /// drained, or goes idle (sets `SLEEPING`, so that the next
    /// reservation schedules the consumer), or, when a reservation is in
    /// flight, reports `Busy`.
    ///
    /// Going idle is a compare-and-swap from the very index the drain
    /// found empty: it fails if any reservation came since, so the bit is
    /// never set on a non-empty queue and never taken back (module docs of
    /// `park`).
    pub(crate) fn poll_batch(&self, out: &mut Vec<T>, max: usize) -> Polled {
        let mut at = self.consume();
        let n = self.drain(&mut at, out, max.max(1));
        if n > 0 {
            return Polled::Got(n);
        }
        let t = self.tail.index.load(Ordering::Acquire);
        debug_assert!(t & SLEEPING == 0, "a pooled consumer runs only while awake");
        if t >> SHIFT != at.index {
            // Reserved, maybe not yet written: its producer finishes
            // without us.
            return Polled::Busy;
        }
        if t & CLOSED != 0 {
            return Polled::Closed;
        }
        // About to go idle: an idle pooled actor does not keep the room a
        // backlog took beyond what it was made with. Before `SLEEPING`,
        // while no push can schedule the next activation.
        self.trim_held(&at, self.head.keep);
        // AcqRel: the next reservation's CAS reads this bit (and so takes
        // the duty to schedule).
        match self
            .tail
            .index
            .compare_exchange(t, t | SLEEPING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Polled::Idle,
            Err(_) => Polled::Busy,
        }
    }

    /// Moves up to `max` published messages into `out` without waiting.
    pub fn try_pop_batch(&self, out: &mut Vec<T>, max: usize) -> usize {
        let mut at = self.consume();
        self.drain(&mut at, out, max)
    }

    /// Takes the consumer side (G3), waiting while another thread has it.
    fn consume(&self) -> Draining<'_, T> {
        let head = &*self.head;
        while head
            .consuming
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Another thread is draining: not how a mailbox is used, but
            // it must stay sound (G3), so wait for it.
            thread::yield_now();
        }
        Draining {
            head,
            index: head.index.load(Ordering::Relaxed),
            // SAFETY: G3: we hold `consuming`.
            block: head.block.with(|b| unsafe { *b }),
        }
    }

    /// Whether the consumer's next slot is published (a poll: `drain`
    /// reads it again, with the ordering that matters).
    #[inline]
    fn published(&self, at: &Draining<'_, T>) -> bool {
        // SAFETY: G4: the head's block is live.
        let slot = unsafe { &(*at.block).slots[at.index % LAP] };
        slot.stamp.load(Ordering::Relaxed) == pos_add(at.index, 1)
    }

    /// Moves up to `max` published messages into `out`.
    #[inline]
    fn drain(&self, at: &mut Draining<'_, T>, out: &mut Vec<T>, max: usize) -> usize {
        let mut taken = 0;
        while taken < max {
            let offset = at.index % LAP;
            // SAFETY: G4: the head's block is live; only we leave it.
            let slot = unsafe { &(*at.block).slots[offset] };
            // Acquire pairs with the producer's publishing Release (G2).
            if slot.stamp.load(Ordering::Acquire) != pos_add(at.index, 1) {
                break;
            }
            let msg = slot.value.with(|p| {
                // SAFETY: G2 and G3: published, so initialised and
                // visible; read once, since the position moves on below
                // before anything can panic.
                unsafe { (*p).assume_init_read() }
            });
            at.index = pos_add(at.index, 1);
            if offset + 1 == BLOCK_CAP {
                self.leave_block(at);
            }
            taken += 1;
            out.push(msg);
        }
        taken
    }

    /// Moves the consumer past a block whose last slot it just took, and
    /// recycles the block.
    #[inline(never)]
    fn leave_block(&self, at: &mut Draining<'_, T>) {
        let spent = at.block;
        // SAFETY: G4: the installer linked `next` before it wrote the
        // last slot, whose stamp we acquired: non-null and visible.
        at.block = unsafe { (*spent).next.load(Ordering::Acquire) };
        debug_assert!(!at.block.is_null(), "linked before the last slot");
        // Past the lap's end marker.
        at.index = pos_add(at.index, 1);
        // SAFETY: G4: every slot taken, so no producer touches it again,
        // and it came from `Block::alloc`.
        unsafe { self.free.push(spent) };
    }

    /// Refuses further pushes and wakes the consumer.
    pub fn close(&self) {
        if self.close_quiet() {
            self.wake.wake();
        }
    }

    /// [`close`](Self::close), leaving the wake-up to the caller: returns
    /// whether the consumer was asleep (see [`push_quiet`](Self::push_quiet)).
    pub(super) fn close_quiet(&self) -> bool {
        // Sets `CLOSED` and takes `SLEEPING` in one step: the one close
        // that finds the consumer asleep wakes it, and a second close finds
        // it awake (a pooled consumer must be scheduled once, not twice).
        let prev = self
            .tail
            .index
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                Some((t | CLOSED) & !SLEEPING)
            })
            .unwrap_or_else(|t| t);
        // After `CLOSED`: a consumer that sees this sees no new
        // reservation after it.
        self.head.closed.store(true, Ordering::Release);
        prev & SLEEPING != 0
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.tail.index.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Reserved messages not yet taken (a snapshot).
    pub fn len(&self) -> usize {
        let tail = self.tail.index.load(Ordering::Acquire) >> SHIFT;
        count(self.head.index.load(Ordering::Acquire), tail)
    }

    /// Whether nothing is queued (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the consumer's next message is still unpublished: what a
    /// lingering pooled consumer polls. It reads the slot the consumer
    /// takes next and the consumer's own line, where
    /// [`is_empty`](Self::is_empty) reads the producers' tail, a line
    /// every push writes: polled from the consumer's core, that look
    /// moved the tail's line over once per message on top of the slot's.
    pub(crate) fn nothing_published(&self) -> bool {
        let at = self.consume();
        !self.published(&at)
    }

    /// Blocks the queue holds, each of room for 31 messages: those in use
    /// and the spare ones it keeps for its next backlog (all it ever
    /// allocated, unless [`trim`](Self::trim) gave some back).
    pub fn blocks(&self) -> usize {
        self.blocks.load(Ordering::Relaxed)
    }

    /// Gives back (frees) the spare blocks beyond `keep`: room a past
    /// backlog left, which the queue otherwise keeps for the next one.
    /// Returns how many it freed. A pooled consumer does this itself each
    /// time it finds the queue empty and goes idle (`poll_batch`), keeping
    /// the spare blocks the queue was made with (its capacity's), and at
    /// least one.
    ///
    /// For the consumer's thread, between drains (it waits for a drain
    /// that is running). It frees nothing while a producer is taking a
    /// spare block (that producer does not wait for it either), and the
    /// next backlog deeper than what is left allocates again.
    pub fn trim(&self, keep: usize) -> usize {
        // G3: the consumer side, so no push to the free stack and no other
        // trim meanwhile.
        let at = self.consume();
        self.trim_held(&at, keep)
    }

    /// [`trim`](Self::trim) by the holder of `consuming` (`_at`), with
    /// nothing to do unless the queue holds more blocks than the one in use
    /// and `keep` spare ones: one load on every idle pooled consumer's way
    /// out. (Between drains the consumer's block is the producers' too, or
    /// an install is under way and holds one more: the count overstates
    /// the spares by at most that one, and the trim finds out.)
    #[inline(always)]
    fn trim_held(&self, _at: &Draining<'_, T>, keep: usize) -> usize {
        if self.blocks.load(Ordering::Relaxed) <= keep + 1 {
            return 0;
        }
        self.trim_spares(keep)
    }

    #[cold]
    #[inline(never)]
    fn trim_spares(&self, keep: usize) -> usize {
        // SAFETY: called by the holder of `consuming` (`trim_held`), and
        // blocks on the free stack are the consumer's once spent (G4).
        let freed = unsafe { self.free.trim(keep) };
        self.blocks.fetch_sub(freed, Ordering::Relaxed);
        freed
    }

    /// Times a push (or `close`) found the consumer asleep and woke it.
    pub fn wakeups(&self) -> u64 {
        self.wake.wakes()
    }

    /// Whether the consumer is asleep, or about to be.
    #[cfg(test)]
    pub(super) fn consumer_asleep(&self) -> bool {
        self.tail.index.load(Ordering::Acquire) & SLEEPING != 0
    }
}

impl<T> Drop for SegmentedMpsc<T> {
    fn drop(&mut self) {
        // `&mut self`: every producer has finished, so every reserved slot
        // is written, and nobody else touches the blocks.
        let tail = self.tail.index.load(Ordering::Relaxed) >> SHIFT;
        let mut index = self.head.index.load(Ordering::Relaxed);
        let first = self.head.block.with(|b| {
            // SAFETY: exclusive access.
            unsafe { *b }
        });
        let mut block = first;
        while index != tail {
            let offset = index % LAP;
            // SAFETY: G2 and G4: positions `head..tail` are written and
            // not taken, each visited once; the chain from the head's
            // block is live.
            unsafe {
                let slot = &(*block).slots[offset];
                debug_assert_eq!(slot.stamp.load(Ordering::Relaxed), pos_add(index, 1));
                slot.value.with_mut(|p| (*p).assume_init_drop());
                index = pos_add(index, 1);
                if offset + 1 == BLOCK_CAP {
                    block = (*block).next.load(Ordering::Relaxed);
                    index = pos_add(index, 1);
                }
            }
        }
        // The chain from the head's block ends at the tail's; the free
        // stack holds every other block. Each was made by `Block::alloc`.
        for mut b in [first, self.free.top()] {
            while !b.is_null() {
                // SAFETY: as above: live until the line below.
                let next = unsafe { (*b).next.load(Ordering::Relaxed) };
                // SAFETY: made by `Block::alloc` (`Box::into_raw`); each
                // block is on exactly one of the two lists, so freed once.
                drop(unsafe { Box::from_raw(b) });
                b = next;
            }
        }
    }
}

#[cfg(test)]
mod tests;
