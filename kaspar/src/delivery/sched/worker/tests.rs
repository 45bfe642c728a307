//! The worker's own state machine: the next-to-run slot's streak, stealing
//! and its cost, the linger, the current worker.

use super::super::{Named, SchedConfig};
use super::*;

/// A worker's own state with `occupant` in its next-to-run slot and
/// `waiting` in its deque; the pool's worker bodies are never run.
fn worker(lifo_limit: u32, occupant: &Task, waiting: Option<&Task>) -> Local {
    let config = SchedConfig {
        workers: 1,
        budget: 64,
        lifo_limit,
        monitor: None,
    };
    let deque = Worker::new_fifo();
    if let Some(task) = waiting {
        deque.push(Arc::clone(task));
    }
    // The worker's deque is the pool's one deque, as in a started pool.
    let shared = Arc::new(Shared {
        stealers: vec![deque.stealer()],
        ..Shared::threadless(config)
    });
    Local {
        shared,
        deque: Some(deque),
        lifo: occupied(occupant),
        token: Arc::new(Token::new()),
        cost: StealCost::default(),
        index: Some(0),
        stalls: StallWatch::new(1),
    }
}

fn task() -> Task {
    Arc::new(Named)
}

/// A next-to-run slot holding `occupant`.
fn occupied(occupant: &Task) -> Slot {
    let slot = Slot::default();
    assert!(slot.put(Arc::clone(occupant)).is_ok());
    slot
}

/// A thief with an empty deque of its own, and the pool's one other
/// worker's deque holding `n` tasks.
fn thief_and_victim(n: usize) -> (Local, Worker<Task>) {
    let config = SchedConfig {
        workers: 2,
        budget: 64,
        lifo_limit: 8,
        monitor: None,
    };
    let victim = Worker::new_fifo();
    for _ in 0..n {
        victim.push(task());
    }
    let shared = Arc::new(Shared {
        stealers: vec![victim.stealer()],
        ..Shared::threadless(config)
    });
    // The victim is worker 0 (the only deque the thief sees); the
    // thief is worker 1, whose deque nobody steals from here.
    let thief = Local {
        shared,
        deque: Some(Worker::new_fifo()),
        lifo: Slot::default(),
        token: Arc::new(Token::new()),
        cost: StealCost::default(),
        index: Some(1),
        stalls: StallWatch::new(2),
    };
    (thief, victim)
}

/// Makes `thief`'s steals dear, the last one stamped an hour ahead, so
/// that however slowly a test runs (Miri, a loaded machine) the next
/// rationed steal is never due.
fn make_dear(thief: &Local) {
    let later = Instant::now() + std::time::Duration::from_secs(3600);
    for _ in 0..32 {
        thief
            .cost
            .record(later, std::time::Duration::from_nanos(400));
    }
    assert!(thief.cost.is_dear());
}

#[test]
fn a_thief_whose_steals_are_cheap_steals_at_once() {
    let (thief, victim) = thief_and_victim(4);
    assert!(thief.steal().is_some());
    assert!(thief.steal().is_some());
    assert!(thief.cost.may_steal(Instant::now));
    drop(victim);
}

#[test]
fn a_thief_whose_steals_are_dear_waits_its_turn_unless_a_worker_is_blocked() {
    let (thief, victim) = thief_and_victim(4);
    make_dear(&thief);
    assert!(thief.steal().is_none(), "stole again within DEAR_EVERY");
    assert_eq!(victim.len(), 4, "nothing moved");
    // A worker blocked in a wait may be waiting for what waits in
    // the deques: stealing is allowed again.
    thief.shared.blocked.fetch_add(1, Ordering::Relaxed);
    assert!(thief.steal().is_some());
    assert!(victim.len() < 4);
}

#[test]
fn a_thief_whose_steals_are_dear_takes_from_a_worker_stuck_in_one_activation_not_a_busy_one() {
    use super::super::steal_cost::STALL;
    let (thief, victim) = thief_and_victim(4);
    make_dear(&thief);
    let count = &thief.shared.progress[0];
    let t = Instant::now();
    // The victim keeps beginning activations, looked at `STALL` apart:
    // busy, not stuck.
    for tick in 1..=3 {
        count.store(tick, Ordering::Relaxed);
        let at = t + STALL * tick;
        assert!(thief.steal_at(|| at).is_none(), "stole from a busy worker");
    }
    assert_eq!(victim.len(), 4);
    // Its count stops moving: the last look started the clock; a look
    // before `STALL` has passed takes nothing, one after it steals.
    let still = t + STALL * 3;
    assert!(thief.steal_at(|| still + STALL / 2).is_none());
    assert_eq!(victim.len(), 4);
    assert!(
        thief.steal_at(|| still + STALL).is_some(),
        "left tasks behind a stuck worker"
    );
    assert!(victim.len() < 4);
    // A worker that moves again is busy again.
    count.store(4, Ordering::Relaxed);
    let left = victim.len();
    assert!(thief.steal_at(|| still + STALL * 2).is_none());
    assert!(thief.steal_at(|| still + STALL * 2 + STALL / 2).is_none());
    assert_eq!(victim.len(), left);
}

#[test]
fn a_worker_counts_the_activations_it_begins() {
    let local = free_worker(None);
    local.begin_activation(41);
    assert_eq!(local.shared.progress[0].load(Ordering::Relaxed), 41);
    let spare = Local {
        index: None,
        ..free_worker(None)
    };
    spare.begin_activation(42);
    assert_eq!(
        spare.shared.progress[0].load(Ordering::Relaxed),
        0,
        "a spare has no count"
    );
}

#[test]
fn a_spent_streak_lets_a_waiting_task_in_first() {
    let (occupant, waiting) = (task(), task());
    let local = worker(2, &occupant, Some(&waiting));
    let mut streak = 2;
    let next = local.next(&mut streak, 1).unwrap();
    assert!(Arc::ptr_eq(&next, &waiting), "the deque's task first");
    let then = local.next(&mut streak, 2).unwrap();
    assert!(Arc::ptr_eq(&then, &occupant), "then the occupant");
}

#[test]
fn a_spent_streak_with_nobody_waiting_runs_on_from_the_slot() {
    let occupant = task();
    let local = worker(2, &occupant, None);
    let mut streak = 2;
    let next = local.next(&mut streak, 1).unwrap();
    assert!(Arc::ptr_eq(&next, &occupant));
    assert_eq!(streak, 1, "the first of a new streak");
    assert!(
        local.deque.as_ref().unwrap().is_empty(),
        "never in the deque, where a sleeping worker would be woken to steal it"
    );
}

#[test]
fn without_a_slot_the_occupant_always_goes_to_the_back() {
    let (occupant, waiting) = (task(), task());
    let local = worker(0, &occupant, Some(&waiting));
    let next = local.next(&mut 0, 1).unwrap();
    assert!(Arc::ptr_eq(&next, &waiting));
}

/// How many times `linger` looked at the mailbox on this thread, with
/// `local` as its worker (none: a thread outside the pool), the
/// mailbox filling up at the `fills_at`-th look (never: `None`).
fn looks(local: Option<Local>, fills_at: Option<u32>) -> u32 {
    let shared = match &local {
        Some(local) => Arc::clone(&local.shared),
        None => worker(8, &task(), None).shared,
    };
    let looked = Cell::new(0);
    let look = || {
        linger(&shared, || {
            looked.set(looked.get() + 1);
            fills_at != Some(looked.get())
        })
    };
    match &local {
        Some(local) => as_current(local, look),
        None => look(),
    }
    looked.get()
}

/// A worker with an empty next-to-run slot and `waiting` in its deque.
fn free_worker(waiting: Option<&Task>) -> Local {
    let local = worker(8, &task(), waiting);
    drop(local.lifo.take());
    local
}

/// A worker with nothing of its own to run, in a pool whose other worker
/// (the deque returned) holds a task it could steal.
fn beside_a_busy_worker() -> (Local, Worker<Task>) {
    let other = Worker::new_fifo();
    other.push(task());
    let mut local = free_worker(None);
    let own = local.deque.as_ref().unwrap().stealer();
    local.shared = Arc::new(Shared {
        stealers: vec![own, other.stealer()],
        ..Shared::threadless(local.shared.config.clone())
    });
    (local, other)
}

#[test]
fn an_idle_worker_lingers_on_an_empty_mailbox_for_its_spins() {
    assert_eq!(looks(Some(free_worker(None)), None), LINGER_SPINS);
}

#[test]
fn a_message_arriving_ends_the_linger_at_that_look() {
    assert_eq!(looks(Some(free_worker(None)), Some(5)), 5);
}

#[test]
fn a_worker_with_anything_to_run_does_not_linger() {
    assert_eq!(
        looks(Some(worker(8, &task(), None)), None),
        1,
        "an occupied slot"
    );
    let waiting = task();
    assert_eq!(
        looks(Some(free_worker(Some(&waiting))), None),
        1,
        "a deque's task"
    );
    let local = free_worker(None);
    local.shared.injector.push(task());
    assert_eq!(looks(Some(local), None), 1, "an injected task");
    // A task this worker could steal from another's deque.
    let (local, _other) = beside_a_busy_worker();
    assert_eq!(looks(Some(local), None), 1, "another worker's task");
}

#[test]
fn a_schedule_into_the_slot_is_counted_and_one_from_outside_is_not() {
    let local = free_worker(None);
    let shared = Arc::clone(&local.shared);
    let before = slotted();
    schedule(&shared, task());
    assert_eq!(slotted(), before, "outside the pool: to the injector");
    let counted = as_current(&local, || {
        schedule(&shared, task());
        slotted()
    });
    assert_eq!(counted, before.wrapping_add(1), "into the slot: counted");
}

/// The current worker is this thread's only inside `as_current`, and
/// the one before comes back when it returns or unwinds (`current`'s
/// safety rests on it).
#[test]
fn the_current_worker_is_put_back_on_return_and_on_unwind() {
    let is = |local: &Local| current(|c| c.is_some_and(|c| std::ptr::eq(c, local)));
    let (outer, inner) = (free_worker(None), free_worker(None));
    assert!(current(|c| c.is_none()));
    as_current(&outer, || {
        assert!(is(&outer));
        as_current(&inner, || assert!(is(&inner)));
        assert!(is(&outer), "the outer one is back after a return");
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            as_current(&inner, || panic!("a handler's panic"));
        }));
        assert!(unwound.is_err());
        assert!(is(&outer), "and after an unwind");
    });
    assert!(current(|c| c.is_none()), "none once out");
}

#[test]
fn a_thread_outside_the_pool_does_not_linger() {
    assert_eq!(looks(None, None), 0);
}

/// Whether `local`'s activation would serve on past its budget
/// ([`renew_budget`]), asked on its thread.
fn serves_on(local: &Local) -> bool {
    as_current(local, || renew_budget(&local.shared))
}

#[test]
fn a_spent_budget_serves_on_only_where_nothing_else_waits() {
    assert!(serves_on(&free_worker(None)), "nothing anywhere");
    assert!(!serves_on(&worker(8, &task(), None)), "an occupied slot");
    let waiting = task();
    assert!(!serves_on(&free_worker(Some(&waiting))), "a deque's task");
    let local = free_worker(None);
    local.shared.injector.push(task());
    assert!(!serves_on(&local), "an injected task");
    let (local, _other) = beside_a_busy_worker();
    assert!(!serves_on(&local), "another worker's task");
}

#[test]
fn a_spent_budget_serves_on_only_on_a_worker_of_its_own_pool() {
    let local = free_worker(None);
    assert!(!renew_budget(&local.shared), "a thread outside the pool");
    let elsewhere = free_worker(None);
    assert!(
        !as_current(&elsewhere, || renew_budget(&local.shared)),
        "a worker of another pool"
    );
    let mut spare = free_worker(None);
    spare.deque = None;
    assert!(!serves_on(&spare), "a spare");
}

/// Worker 0's activation count, as the monitor reads it.
fn count(local: &Local) -> u32 {
    local.shared.progress[0].load(Ordering::Relaxed)
}

#[test]
fn a_renewed_budget_counts_as_an_activation_and_a_refused_one_does_not() {
    let local = free_worker(None);
    let before = count(&local);
    assert!(serves_on(&local));
    assert_eq!(count(&local), before.wrapping_add(1), "renewed: counted");
    local.shared.injector.push(task());
    assert!(!serves_on(&local));
    assert_eq!(
        count(&local),
        before.wrapping_add(1),
        "refused: not counted"
    );
}
