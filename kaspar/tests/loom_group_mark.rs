//! Loom models of a group's lock as its thread holds it for a batch and
//! lets a synchronous caller in between two messages (`Held::bump`): the
//! thread's group mark, which sends calls between members down the
//! intra-group path with no flags check, and a member's `entered` mark,
//! a plain `bool` that only the lock's holder touches.
//!
//! Run with its own target dir (see `.ci/steps/loom.sh`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p kaspar --release --test loom_group_mark --target-dir target/loom
//! ```
//!
//! The group thread's hold is the shipped `Held` (`kaspar::__loom::Hold`:
//! `Held::acquire`, `Held::bump`), the caller takes the lock as a
//! synchronous entry does (`Lock::call`), a member is flagged by the
//! shipped `ActorLock::member_flagged`, and the `entered` mark is the
//! shipped `EnteredFlag` (a loom `UnsafeCell` under `--cfg loom`). Under
//! loom each model thread has its own runtime thread state (its chain,
//! token and group mark), so the marks are per thread as they are in
//! production.
#![cfg(loom)]

use kaspar::__loom::{thread_token, Lock, Member};
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// The group's thread holds its lock for a batch, its members clean, so
/// it marks the group. A synchronous caller parks for the lock; the
/// group's thread bumps between two messages and lets it in; the caller's
/// handler halts a member (its first flag: `member_flagged`, which also
/// forgets the caller's own mark). When `bump` returns, the group thread's
/// mark must not claim a clean group while a member is flagged: an
/// intra-group call would then run a halted member's handler with no flags
/// check. (`bump` used to keep the mark across the release; only the
/// flagging thread's mark was forgotten.) The mark is never left behind
/// on a thread that no longer holds the lock.
#[test]
fn loom_group_mark_after_bump_never_claims_a_flagged_group_clean() {
    model(|| {
        let lock = Arc::new(Lock::group());
        let mut held = lock.hold();
        assert!(lock.marked_here(), "a clean group's holder marks it");
        let caller = {
            let lock = Arc::clone(&lock);
            thread::spawn(move || {
                let marks = lock.call(thread_token(), || {
                    let on_entry = lock.marked_here();
                    // The handler halts a member: its first flag.
                    lock.member_flagged();
                    (on_entry, lock.marked_here())
                });
                (marks, lock.marked_here())
            })
        };
        // The first message, until the caller has parked for the lock.
        while !lock.has_parked() {
            thread::yield_now();
        }
        held.bump();
        assert!(
            !lock.marked_here() || lock.members_clean(),
            "after bump the group's thread marks a group with a flagged member clean"
        );
        drop(held);
        assert!(!lock.marked_here(), "a mark outlived the run loop's hold");
        let ((on_entry, after_flag), after_call) = caller.join().unwrap();
        assert!(on_entry, "the caller did not mark the clean group it holds");
        assert!(!after_flag, "the flagging caller kept its mark");
        assert!(!after_call, "a mark outlived the caller's hold");
        assert!(!lock.members_clean());
    });
}

/// A member's `entered` mark is set for each entry into it and cleared
/// when the entry ends, before its lock is let go; only the lock's holder
/// reads or writes it (no atomic: the lock's acquire and release order
/// it). The group's thread enters the member for the first message of a
/// batch (as `enter_held` does, and as an intra-group call does while the
/// group is marked), bumps, and enters it again for the second; a caller
/// let in by the bump, or getting the lock after the batch, enters it too.
/// Neither ever finds the mark set by the other (that would refuse the
/// entry as a cycle, or panic the run loop), and every access is ordered
/// by the lock (the flag is a loom `UnsafeCell`: an unordered access is a
/// reported data race).
#[test]
fn loom_group_mark_entered_flag_is_never_seen_set_by_the_other_holder() {
    model(|| {
        let lock = Arc::new(Lock::group());
        let member = Arc::new(Member::default());
        let mut held = lock.hold();
        // SAFETY: this thread holds the member's (group's) lock until the
        // mark is dropped, at the end of the statement.
        let first = unsafe { member.enter() };
        assert!(
            first.is_some(),
            "the first message found the member entered"
        );
        drop(first);
        let caller = {
            let (lock, member) = (Arc::clone(&lock), Arc::clone(&member));
            thread::spawn(move || {
                lock.call(thread_token(), || {
                    // SAFETY: inside `call`, this thread holds the lock
                    // until the mark is dropped, at the end of the closure.
                    unsafe { member.enter() }.is_some()
                })
            })
        };
        while !lock.has_parked() {
            thread::yield_now();
        }
        held.bump();
        // The second message, by the intra-group path if the group is
        // marked (the mark stands for the lock), else as `enter_held`.
        assert!(!lock.marked_here() || lock.members_clean());
        // SAFETY: `bump` returns with the lock held again.
        let second = unsafe { member.enter() };
        assert!(
            second.is_some(),
            "the group's thread found the member entered by the caller"
        );
        drop(second);
        drop(held);
        assert!(
            caller.join().unwrap(),
            "the caller found the member entered by the group's thread"
        );
    });
}
