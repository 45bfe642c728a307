//! The entry protocol, cell by cell: cycles, busy locks, stopped and
//! vacant cells, and the accounting of each entry.

use super::*;
use crate::base::ids::ClassId;
use crate::guard::lock::Wait;
use crate::mailbox::inbox::Inbox;
use crate::mailbox::{Mailbox, MailboxKind};

pub struct Ping;

#[crate::actor]
pub struct Counter {
    seen: u64,
}

#[crate::actor]
impl Counter {
    #[crate::handler(Ping)]
    fn on_ping(&mut self, _msg: Ping, _ctx: &mut crate::Ctx<Self>) {
        self.seen += 1;
    }
}

const PING: ClassId = ClassId::new(0);

fn cell() -> ActorCell<Counter> {
    ActorCell::new(
        Counter { seen: 0 },
        Arc::new(ActorLock::new(false)),
        CyclePolicy::Conservative,
        Inbox::Own(Mailbox::new(MailboxKind::DEFAULT)),
        Clock::System,
        DeadLetters::new(),
        Instance::detached(),
    )
}

fn refusal<T>(r: Result<T, Refusal>) -> &'static str {
    match r {
        Ok(_) => "entered",
        Err(Refusal::Cycle(_)) => "cycle",
        Err(Refusal::Busy) => "busy",
        Err(Refusal::Deadlock(_)) => "deadlock",
        Err(Refusal::Closed) => "closed",
        Err(Refusal::NotStarted) => "not started",
        Err(Refusal::ThreadBound) => "thread-bound",
    }
}

/// Enters `cell` for a `Ping` and returns what `f` saw.
fn enter<T>(
    cell: &ActorCell<Counter>,
    class: ClassId,
    policy: CyclePolicy,
    wait: Wait,
    f: impl FnOnce(&mut Entered<'_, Counter>) -> T,
) -> Result<T, Refusal> {
    cell.enter_with(class, policy, wait, (), |entered, ()| f(entered))
        .map_err(|(refusal, ())| refusal)
}

#[test]
fn an_entry_takes_the_lock_pushes_a_frame_and_undoes_both_after() {
    let cell = cell();
    let me = chain::thread_token();
    enter(
        &cell,
        PING,
        CyclePolicy::Conservative,
        Wait::Try,
        |entered| {
            assert!(cell.lock.held_by(me));
            assert_eq!(chain::snapshot().len(), 1);
            crate::actor::traits::exclusive_ref::<Counter>(entered.access()).seen += 1;
        },
    )
    .ok()
    .unwrap();
    assert_eq!(cell.lock.owner(), 0, "released after the entry");
    assert!(chain::snapshot().is_empty(), "frame popped after the entry");
    assert_eq!(cell.counters().handled, 1, "a handler entry is counted");
    // SAFETY: no entry is live.
    assert_eq!(unsafe { (*cell.state.0.get()).as_ref().unwrap().seen }, 1);
}

#[test]
fn a_second_entry_on_the_same_thread_is_a_cycle_and_leaves_the_lock_alone() {
    let cell = cell();
    enter(&cell, PING, CyclePolicy::Conservative, Wait::Park, |_| {
        let owner = cell.lock.owner();
        for policy in [CyclePolicy::Conservative, CyclePolicy::Permissive] {
            assert_eq!(
                refusal(enter(&cell, PING, policy, Wait::Park, |_| ())),
                "cycle"
            );
            assert_eq!(cell.lock.owner(), owner, "still held by the outer entry");
            assert_eq!(chain::snapshot().len(), 1, "the refused frame was popped");
        }
    })
    .ok()
    .unwrap();
    assert_eq!(cell.counters().cycles, 2);
    assert_eq!(cell.counters().handled, 1);
}

#[test]
fn a_lock_held_by_another_thread_is_busy_for_a_try() {
    let cell = Arc::new(cell());
    let holder = Arc::clone(&cell);
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let t = std::thread::spawn(move || {
        enter(&holder, PING, CyclePolicy::Conservative, Wait::Park, |_| {
            held_tx.send(()).unwrap();
            done_rx.recv().unwrap();
        })
        .ok()
        .unwrap();
    });
    held_rx.recv().unwrap();
    let busy = enter(&cell, PING, CyclePolicy::Conservative, Wait::Try, |_| ());
    assert_eq!(refusal(busy), "busy");
    assert!(
        chain::snapshot().is_empty(),
        "a refused entry leaves no frame"
    );
    done_tx.send(()).unwrap();
    t.join().unwrap();
    let free = enter(&cell, PING, CyclePolicy::Conservative, Wait::Try, |_| ());
    assert_eq!(refusal(free), "entered");
}

#[test]
fn a_stopped_actor_refuses_entry_and_releases_the_lock_it_took() {
    let cell = cell();
    {
        let held = cell.hold();
        cell.mark_stopped(&held);
    }
    let ran = enter(&cell, PING, CyclePolicy::Conservative, Wait::Park, |_| {
        panic!("a stopped actor's handler ran")
    });
    assert_eq!(refusal(ran), "closed");
    assert_eq!(cell.lock.owner(), 0);
    assert!(chain::snapshot().is_empty());
    assert_eq!(cell.counters().handled, 0, "a refused entry is not counted");
}

#[test]
fn a_vacant_cell_refuses_entry_until_filled_and_again_once_vacated() {
    let cell = ActorCell::<Counter>::vacant(
        Arc::new(ActorLock::new(false)),
        CyclePolicy::Conservative,
        Inbox::Own(Mailbox::new(MailboxKind::DEFAULT)),
        Clock::System,
        DeadLetters::new(),
        Instance::detached(),
    );
    let early = enter(&cell, PING, CyclePolicy::Conservative, Wait::Park, |_| {
        panic!("a vacant cell's handler ran")
    });
    assert_eq!(refusal(early), "not started");
    assert_eq!(cell.lock.owner(), 0, "the refused entry released the lock");
    {
        let held = cell.hold();
        cell.fill(&held, Counter { seen: 41 });
    }
    enter(
        &cell,
        PING,
        CyclePolicy::Conservative,
        Wait::Park,
        |entered| {
            crate::actor::traits::exclusive_ref::<Counter>(entered.access()).seen += 1;
        },
    )
    .ok()
    .unwrap();
    let held = cell.hold();
    cell.mark_stopped(&held);
    let state = cell.vacate(&held).expect("filled above");
    assert_eq!(state.seen, 42);
    drop(held);
    let late = enter(&cell, PING, CyclePolicy::Conservative, Wait::Park, |_| ());
    assert_eq!(refusal(late), "closed");
}

#[test]
fn a_lifecycle_entry_is_not_counted_as_handled() {
    let cell = cell();
    enter(
        &cell,
        ClassId::LIFECYCLE,
        CyclePolicy::Conservative,
        Wait::Park,
        |_| (),
    )
    .ok()
    .unwrap();
    assert_eq!(cell.counters().handled, 0);
}

#[test]
#[should_panic(expected = "not its own")]
fn entering_under_another_actors_hold_panics() {
    let (a, b) = (cell(), cell());
    let held = a.hold();
    let _ = b.enter_held(&held, PING);
}

fn vacant() -> ActorCell<Counter> {
    ActorCell::<Counter>::vacant(
        Arc::new(ActorLock::new(false)),
        CyclePolicy::Conservative,
        Inbox::Own(Mailbox::new(MailboxKind::DEFAULT)),
        Clock::System,
        DeadLetters::new(),
        Instance::detached(),
    )
}

/// Rounds of the racing tests below (fewer under Miri, which is slow).
const ROUNDS: usize = if cfg!(miri) { 3 } else { 200 };

/// Issue 25, row 3: a prepared actor's address is public before it starts,
/// so a synchronous caller may hold its lock for a moment (to be refused
/// `NotStarted`) just as the spawner hands the lock over. The hand-over
/// waits for it; the adopting thread then owns the lock, and the caller is
/// refused until the state is in.
#[test]
fn a_hand_over_waits_for_a_momentary_holder_of_a_vacant_cell() {
    for _ in 0..ROUNDS {
        let cell = vacant();
        let stop = crate::base::sync::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let r = enter(&cell, PING, CyclePolicy::Conservative, Wait::Try, |_| ());
                    assert!(matches!(refusal(r), "not started" | "busy" | "entered"));
                }
            });
            cell.lock.hand_over();
            // SAFETY: handed over just above for this thread, adopted once.
            let held = unsafe { Held::adopt(&cell.lock) };
            assert!(cell.lock.held_by(chain::thread_token()));
            cell.fill(&held, Counter { seen: 0 });
            drop(held);
            stop.store(true, Ordering::Relaxed);
        });
        assert_eq!(cell.lock.owner(), 0);
    }
}

/// Issue 25, row 4: a caller let in by a group thread's bump halts a
/// member (its flag goes up); when the group thread has its lock back it
/// no longer marks the group clean, so a call between members takes the
/// checked path, which refuses the halted member.
#[test]
fn a_bump_sets_the_group_mark_afresh_from_the_members_flags() {
    let lock = Arc::new(ActorLock::new(true));
    let mut held = Held::acquire(&lock);
    assert!(chain::this_thread().holds_group(&*lock), "clean: marked");
    let done = crate::base::sync::AtomicBool::new(false);
    std::thread::scope(|s| {
        let caller = s.spawn(|| {
            let me = chain::thread_token();
            lock.park_acquire(me);
            // What halting a member does to the lock.
            lock.member_flagged();
            // SAFETY: acquired just above by this thread.
            unsafe { lock.release(me) };
            done.store(true, Ordering::SeqCst);
        });
        // Bump until the caller has been let in. It raises `PARKED` a
        // moment before it is queued to sleep; a bump in that moment
        // releases with nobody to hand the lock to and takes it straight
        // back, and the caller, finding the lock held and unmarked, marks
        // and parks again for the next bump (miri's scheduler found that
        // moment). A run loop bumps between every two messages.
        let target = || crate::base::ids::Target::new(crate::base::ids::ActorId::GROUP, "G", None);
        while !done.load(Ordering::SeqCst) {
            if lock.has_parked() {
                held.bump(target);
            } else {
                std::thread::yield_now();
            }
        }
        caller.join().unwrap();
    });
    assert!(
        lock.held_by(chain::thread_token()),
        "the bump took the lock back"
    );
    assert!(
        !chain::this_thread().holds_group(&*lock),
        "a member flagged while the lock was let go: the mark must not say clean"
    );
    drop(held);
    assert_eq!(lock.owner(), 0);
}

/// Issue 25, row 1: a thread-bound actor's home is a number no later
/// thread gets, even one whose thread-local storage (and so whose token)
/// is the dead home thread's.
#[test]
fn home_ids_are_never_reused_by_later_threads() {
    let mut seen = Vec::new();
    for _ in 0..if cfg!(miri) { 4 } else { 64 } {
        let id = std::thread::spawn(|| chain::this_thread().home_id())
            .join()
            .unwrap();
        assert_ne!(id, 0);
        assert!(!seen.contains(&id), "home id {id} given twice");
        seen.push(id);
    }
    let here = chain::this_thread().home_id();
    assert_eq!(here, chain::this_thread().home_id(), "stable on its thread");
    assert!(!seen.contains(&here));
}

/// The entry check gives no home id out: a thread without one is nobody's
/// home, and no thread is the home of an actor whose home is 0 (not
/// started, stopped, or not thread-bound).
#[test]
fn the_home_check_refuses_without_giving_out_an_id() {
    std::thread::spawn(|| {
        let t = chain::this_thread();
        let other = std::thread::spawn(|| chain::this_thread().home_id())
            .join()
            .unwrap();
        assert!(!t.is_home(0) && !t.is_home(other), "no id yet");
        let later = std::thread::spawn(|| chain::this_thread().home_id())
            .join()
            .unwrap();
        // Ids are handed out in order: had the checks above given this
        // thread its id, it would come before `later`'s.
        let own = t.home_id();
        assert!(own > later, "the check gave out {own}, before {later}");
        assert!(t.is_home(own));
        assert!(!t.is_home(0), "an actor with no home is nobody's");
    })
    .join()
    .unwrap();
}

#[test]
fn the_home_id_counter_stops_instead_of_wrapping() {
    let next = std::sync::atomic::AtomicU32::new(u32::MAX - 2);
    assert_eq!(chain::take_home_id(&next), Some(u32::MAX - 2));
    assert_eq!(chain::take_home_id(&next), Some(u32::MAX - 1));
    assert_eq!(chain::take_home_id(&next), None, "u32::MAX is never given");
    assert_eq!(chain::take_home_id(&next), None, "nor anything after it");
}

/// Where, in the cell of an actor with the pooled default mailbox, a push
/// starts writing (the queue's lock word), where it stops, and where the
/// queue's consumer half starts: measured on a value, as the inbox is an
/// enum.
fn compact_offsets() -> (usize, usize, usize) {
    use crate::mailbox::{Mailbox, MailboxKind};
    use std::mem::offset_of;
    let inbox = ActorInbox::<Counter>::Own(Mailbox::new(MailboxKind::Compact));
    let Inbox::Own(Mailbox::Compact(queue)) = &inbox else {
        unreachable!("made as a compact mailbox")
    };
    let base = &inbox as *const _ as usize;
    let at = |addr: usize| offset_of!(ActorCell<Counter>, inbox) + (addr - base);
    let (pushes_end, consumer) = queue.halves();
    (at(queue as *const _ as usize), at(pushes_end), at(consumer))
}

#[test]
fn what_the_lock_holder_writes_is_a_cache_line_away_from_what_senders_touch() {
    use std::mem::{offset_of, size_of};
    type Cell = ActorCell<Counter>;
    // The high-water mark every push reads (band 1 of the layout).
    let high_water = offset_of!(Cell, stats)
        + offset_of!(Stats, shared)
        + offset_of!(SharedCounters, mailbox_high_water);
    // The end of what a push writes in the pooled default mailbox, and
    // where its consumer's half starts (band 3).
    let (_, pushes_end, consumer) = compact_offsets();
    let inbox_end = offset_of!(Cell, inbox) + size_of::<ActorInbox<Counter>>();
    // What every handled message writes (band 4).
    let holder = offset_of!(Cell, locked).min(offset_of!(Cell, state));
    let senders_last = (high_water + 7).max(pushes_end - 1);
    assert!(
        consumer.min(holder) >= senders_last + 64 && holder >= inbox_end,
        "high water at {high_water}, pushes write up to {pushes_end}, the consumer \
         from {consumer}, holder's fields at {holder}"
    );
    // The enums around the queue keep their tag in its padding's niche.
    assert_eq!(
        size_of::<ActorInbox<Counter>>(),
        size_of::<crate::mailbox::CompactMpsc<Queued<crate::actor::packed::Stored<Counter>>>>(),
        "the inbox costs no word beyond its compact queue"
    );
    // Nothing in the cell asks for more than a word's alignment: no
    // padding to 128-byte lines (the lock-free queues keep theirs, boxed).
    assert!(std::mem::align_of::<Cell>() <= 16);
}

/// What the run loop reads for every message it serves shares no cache
/// line with what every push writes, wherever the allocator puts the
/// cell: the flags (band 1) end a line before the queue's lock word, and
/// supervision, whose dead letters it asks whether they were abandoned,
/// starts a line after the queue's deque (band 4). With supervision in
/// band 2, right before the lock word, a stream into a pooled actor ran
/// 1.6 times slower in half the placements (the cell's doc comment).
#[test]
fn what_the_run_loop_reads_per_message_is_a_cache_line_away_from_what_pushes_write() {
    use std::mem::offset_of;
    type Cell = ActorCell<Counter>;
    let (pushes_start, pushes_end, _) = compact_offsets();
    let flags = offset_of!(Cell, flags);
    let sup = offset_of!(Cell, sup);
    assert!(
        flags + 64 <= pushes_start && sup >= pushes_end - 1 + 64,
        "flags at {flags}, supervision at {sup}, pushes write {pushes_start}..{pushes_end}"
    );
}

#[test]
fn only_an_actor_on_a_thread_of_its_own_is_a_dedicated_ask_target() {
    // What decides whether a waiting asker sleeps at a yield that gave its
    // core away (`Backoff::ending_at_switch`).
    let system = crate::System::new();
    let threaded = system.spawn(Counter { seen: 0 }).start();
    let pooled = system.spawn(Counter { seen: 0 }).pooled().start();
    assert!(threaded.cell.inbox.dedicated());
    assert!(!pooled.cell.inbox.dedicated(), "a pool's workers run it");
    assert_eq!(threaded.ask(Ping).unwrap().wait(), Ok(()));
    assert_eq!(pooled.ask(Ping).unwrap().wait(), Ok(()));
    system.shutdown();
}
