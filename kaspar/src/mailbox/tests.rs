//! What every mailbox kind promises about waking its consumer: a wake-up
//! only for a consumer that is asleep, exactly one per sleep, and none at
//! all for one that never sleeps.

use std::sync::Arc;
use std::thread;

use super::{Drained, IdleWait, Mailbox, MailboxKind, WhenFull};

const KINDS: [MailboxKind; 6] = [
    MailboxKind::BQueue { capacity: 4 },
    MailboxKind::BQueueBatched { capacity: 4 },
    MailboxKind::Sharded {
        lanes: 2,
        capacity: 4,
    },
    MailboxKind::LockFree {
        capacity: 4,
        when_full: WhenFull::Reject,
    },
    MailboxKind::Segmented { capacity: 4 },
    MailboxKind::Compact,
];

/// A consumer thread draining `q` with `idle` until it closes; returns
/// what it took.
fn consumer(q: &Arc<Mailbox<u32>>, idle: IdleWait) -> thread::JoinHandle<Vec<u32>> {
    let q = Arc::clone(q);
    thread::spawn(move || {
        let mut out = Vec::new();
        while let Drained::Got(_) = q.pop_batch(&mut out, 8, idle) {}
        out
    })
}

fn until_asleep(q: &Mailbox<u32>) {
    while !q.consumer_asleep() {
        thread::yield_now();
    }
}

#[test]
fn a_spinning_consumer_takes_every_message_without_a_wakeup() {
    let n = if cfg!(miri) { 5 } else { 300 };
    for kind in KINDS {
        let q = Arc::new(Mailbox::new(kind));
        let taker = consumer(&q, IdleWait::Spin);
        for i in 0..n {
            // One at a time, so the consumer finds the queue empty between
            // messages and waits for each.
            while q.push(i).is_err() {
                thread::yield_now();
            }
            while !q.is_empty() {
                thread::yield_now();
            }
        }
        q.close();
        assert_eq!(
            taker.join().unwrap(),
            (0..n).collect::<Vec<_>>(),
            "{kind:?}"
        );
        assert_eq!(q.wakeups(), 0, "{kind:?}: a consumer that never sleeps");
    }
}

#[test]
fn a_parked_consumer_costs_exactly_one_wakeup_per_sleep() {
    let n = if cfg!(miri) { 3 } else { 200 };
    for kind in KINDS {
        let q = Arc::new(Mailbox::new(kind));
        let taker = consumer(&q, IdleWait::Park);
        for i in 0..n {
            // The consumer sleeps again only after taking the last
            // message: each round is one sleep and one push that ends it.
            until_asleep(&q);
            q.push(i).unwrap();
        }
        until_asleep(&q);
        assert_eq!(q.wakeups(), u64::from(n), "{kind:?}: one per push");
        q.close();
        assert_eq!(
            taker.join().unwrap(),
            (0..n).collect::<Vec<_>>(),
            "{kind:?}"
        );
        assert_eq!(q.wakeups(), u64::from(n) + 1, "{kind:?}: and one for close");
    }
}

#[test]
fn the_default_consumer_falls_asleep_once_its_polling_budget_is_spent() {
    assert_eq!(IdleWait::default(), IdleWait::Backoff);
    let n = if cfg!(miri) { 2 } else { 20 };
    for kind in KINDS {
        let q = Arc::new(Mailbox::new(kind));
        let taker = consumer(&q, IdleWait::default());
        for i in 0..n {
            // Returns only because the budget is bounded.
            until_asleep(&q);
            q.push(i).unwrap();
        }
        until_asleep(&q);
        assert_eq!(q.wakeups(), u64::from(n), "{kind:?}");
        q.close();
        assert_eq!(
            taker.join().unwrap(),
            (0..n).collect::<Vec<_>>(),
            "{kind:?}"
        );
    }
}

#[test]
fn closing_a_mailbox_whose_consumer_is_awake_wakes_nobody() {
    for kind in KINDS {
        let q = Mailbox::new(kind);
        q.close();
        assert!(q.push(1u32).is_err());
        assert_eq!(q.wakeups(), 0, "{kind:?}: nobody was asleep");
    }
}

#[test]
#[cfg_attr(miri, ignore = "Miri's budget has no shorter spin phase to switch to")]
fn a_backoff_consumer_spins_briefly_after_a_wait_longer_than_a_full_spin() {
    use super::park::Polls;
    // A thread of its own: the history is per thread.
    thread::spawn(|| {
        // No yield gives the core away, until the last case.
        crate::base::backoff::pretend_yields_take(Some(std::time::Duration::ZERO));
        let is_brief = |p: &Polls| match p {
            Polls::Backoff(b) => b.is_brief(),
            _ => panic!("IdleWait::Backoff polls with a Backoff"),
        };
        let mut first = Polls::new(IdleWait::Backoff);
        assert!(!is_brief(&first), "a fresh consumer spins fully");
        // A message there at the first poll: still a full spin next time.
        assert!(first.until(|| true));
        let mut second = Polls::new(IdleWait::Backoff);
        assert!(!is_brief(&second));
        // Nothing came within the whole budget: the next wait is brief.
        assert!(!second.until(|| false));
        let mut third = Polls::new(IdleWait::Backoff);
        assert!(is_brief(&third), "after a wait that outlasted the budget");
        // A brief wait that ends while a full spin would still be
        // spinning (the fourth poll: three spins and one yield) switches
        // back.
        let mut polls = 0;
        assert!(third.until(|| {
            polls += 1;
            polls == 4
        }));
        let mut fourth = Polls::new(IdleWait::Backoff);
        assert!(!is_brief(&fourth), "caught up within a full spin's time");
        // One that ends late in its yields stays brief, and `Park` and
        // `Spin` consumers neither read nor change the history.
        let mut polls = 0;
        assert!(fourth.until(|| {
            polls += 1;
            polls == 12
        }));
        assert!(is_brief(&Polls::new(IdleWait::Backoff)));
        assert!(!Polls::new(IdleWait::Park).until(|| true));
        assert!(is_brief(&Polls::new(IdleWait::Backoff)));
        // A brief wait that ends at its fourth poll, as the third did, but
        // whose one yield gave the core to another thread, stays brief.
        crate::base::backoff::pretend_yields_take(Some(std::time::Duration::from_micros(2)));
        let mut polls = 0;
        assert!(Polls::new(IdleWait::Backoff).until(|| {
            polls += 1;
            polls == 4
        }));
        assert!(is_brief(&Polls::new(IdleWait::Backoff)), "shares a core");
    })
    .join()
    .unwrap();
}

#[test]
#[cfg(not(loom))]
fn a_backoff_consumer_woken_soon_after_it_slept_stays_awake_through_its_next_wait() {
    use std::time::{Duration, Instant};

    use super::park::{slept, Polls, SHORT_SLEEP};
    // A thread of its own: the history is per thread.
    thread::spawn(|| {
        let awake = |p: &Polls| matches!(p, Polls::Awake(..));
        assert!(!awake(&Polls::new(IdleWait::Backoff)), "a fresh consumer");
        // A sleep that ended within `SHORT_SLEEP`: past its budget, the
        // next wait yields for that much longer before it gives up.
        slept(Duration::from_micros(10));
        let start = Instant::now();
        let mut next = Polls::new(IdleWait::Backoff);
        assert!(awake(&next));
        assert!(!next.until(|| false));
        assert!(
            start.elapsed() >= SHORT_SLEEP,
            "awake for {:?}",
            start.elapsed()
        );
        // A message ends it, as any wait (and a wait with no sleep in
        // between does not change the history).
        let mut polls = 0;
        assert!(Polls::new(IdleWait::Backoff).until(|| {
            polls += 1;
            polls == 2
        }));
        assert!(awake(&Polls::new(IdleWait::Backoff)));
        // Only `Backoff` consumers stay awake.
        assert!(!Polls::new(IdleWait::Park).until(|| true));
        assert!(matches!(
            Polls::new(IdleWait::SpinThenPark { spins: 1 }),
            Polls::Count(1)
        ));
        // A sleep of `SHORT_SLEEP` or longer: the plain budget again.
        slept(SHORT_SLEEP);
        assert!(!awake(&Polls::new(IdleWait::Backoff)));
        slept(Duration::from_millis(5));
        assert!(!awake(&Polls::new(IdleWait::Backoff)));
    })
    .join()
    .unwrap();
}
