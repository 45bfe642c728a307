//! Loom model of a worker's next-to-run slot (`delivery/sched/next_slot.rs`):
//! its owner puts and takes while thieves (the pool's monitor) steal.
//! Every value put is taken exactly once, by the owner, a thief, or the
//! owner's last look, and a put that finds the slot busy hands its value
//! back. Loom also checks each access of the slot's cell against the
//! others: a thief's read must happen before the owner's next write.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_next_slot --target-dir target/loom`
//!
//! Make the owner's look for `EMPTY` in `put` `Relaxed` and loom reports a
//! concurrent access of the cell (checked).
#![cfg(loom)]

use kaspar::__loom::NextSlot;
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

/// The owner's side: puts `values` one after the other, taking between
/// them as a worker does when it runs the slotted actor; returns what it
/// took and what it put (a put into a busy slot hands the value back).
fn owner(slot: &NextSlot<u32>, values: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let (mut took, mut put) = (Vec::new(), Vec::new());
    for &v in values {
        if slot.put(v).is_ok() {
            put.push(v);
        }
        took.extend(slot.take());
    }
    (took, put)
}

fn check(mut taken: Vec<u32>, mut put: Vec<u32>) {
    taken.sort_unstable();
    put.sort_unstable();
    assert_eq!(taken, put, "each value put is taken exactly once");
}

#[test]
fn an_owner_and_a_thief_take_each_value_once() {
    model(|| {
        let slot = Arc::new(NextSlot::new());
        let thief = {
            let slot = Arc::clone(&slot);
            thread::spawn(move || slot.steal())
        };
        let (mut taken, put) = owner(&slot, &[1, 2]);
        taken.extend(thief.join().unwrap());
        taken.extend(slot.take());
        check(taken, put);
    });
}

#[test]
fn two_thieves_never_take_one_value_twice() {
    model(|| {
        let slot = Arc::new(NextSlot::new());
        slot.put(7).unwrap();
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let slot = Arc::clone(&slot);
                thread::spawn(move || slot.steal())
            })
            .collect();
        let mut taken: Vec<u32> = slot.take().into_iter().collect();
        for t in thieves {
            taken.extend(t.join().unwrap());
        }
        check(taken, vec![7]);
    });
}

#[test]
fn a_value_left_in_the_slot_is_dropped_once() {
    model(|| {
        let value = Arc::new(());
        let slot = Arc::new(NextSlot::new());
        slot.put(Arc::clone(&value)).unwrap();
        let thief = {
            let slot = Arc::clone(&slot);
            thread::spawn(move || drop(slot.steal()))
        };
        thief.join().unwrap();
        drop(slot);
        assert_eq!(Arc::strong_count(&value), 1, "dropped once, taken or not");
    });
}
