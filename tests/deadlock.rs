//! Cross-thread deadlock detection: threads that each hold one actor and
//! wait for the next one's lock. Barriers line the threads up; a watchdog
//! fails the test instead of letting it hang.

use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use kaspar::prelude::*;

/// Hold this node, wait until every thread holds its node, then
/// `fast_send` the next node.
pub struct Hop {
    pub next: Addr<Node>,
    pub all_holding: Arc<Barrier>,
}
pub struct Touch;

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Reached,
    Deadlock { threads: usize },
    Other(String),
}

#[actor]
pub struct Node;

#[actor]
impl Node {
    #[handler(Hop)]
    fn hop(&mut self, msg: Hop, _ctx: &mut Ctx<Self>) -> Outcome {
        msg.all_holding.wait();
        match msg.next.fast_send(Touch) {
            Ok(()) => Outcome::Reached,
            Err(FastSendError::Deadlock {
                cycle,
                target,
                msg: Touch,
            }) => {
                assert_eq!(target.id, msg.next.id());
                Outcome::Deadlock {
                    threads: cycle.len(),
                }
            }
            Err(e) => Outcome::Other(format!("{e:?}")),
        }
    }

    #[handler(Touch)]
    fn touch(&mut self, _msg: Touch, _ctx: &mut Ctx<Self>) {}
}

/// How the ring's threads wait for the next node's lock.
#[derive(Clone, Copy)]
enum Waiting {
    Park,
    Spin,
    Adaptive,
}

/// Runs an n-thread ring (thread i holds node i and wants node i+1) under a
/// watchdog, with the given way of calling the first hop.
fn ring(n: usize, waiting: Waiting) -> Vec<Outcome> {
    let (done_tx, done_rx) = mpsc::channel();
    let runner = thread::spawn(move || {
        let system = System::new();
        let nodes: Vec<Addr<Node>> = (0..n).map(|_| system.spawn(Node).start()).collect();
        let barrier = Arc::new(Barrier::new(n));
        let threads: Vec<_> = (0..n)
            .map(|i| {
                let here = nodes[i].clone();
                let hop = Hop {
                    next: nodes[(i + 1) % n].clone(),
                    all_holding: Arc::clone(&barrier),
                };
                thread::spawn(move || {
                    let r = match waiting {
                        Waiting::Park => here.fast_send(hop),
                        Waiting::Spin => here.fast_send_spin(hop),
                        Waiting::Adaptive => here.fast_send_adaptive(hop),
                    };
                    r.map_err(|e| e.without_message()).unwrap()
                })
            })
            .collect();
        let outcomes: Vec<Outcome> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let deadlocks: u64 = nodes.iter().map(|a| a.stats().deadlocks).sum();
        done_tx.send((outcomes, deadlocks)).unwrap();
    });
    let (outcomes, deadlocks) = done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("watchdog: the lock ring hung instead of reporting a deadlock");
    runner.join().unwrap();
    assert_eq!(deadlocks, 1, "exactly one refusal is counted");
    outcomes
}

fn check(outcomes: &[Outcome], n: usize) {
    let refused: Vec<_> = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Deadlock { .. }))
        .collect();
    assert_eq!(
        refused,
        vec![&Outcome::Deadlock { threads: n }],
        "{outcomes:?}"
    );
    let reached = outcomes.iter().filter(|o| **o == Outcome::Reached).count();
    assert_eq!(reached, n - 1, "{outcomes:?}");
}

#[test]
fn two_threads_crossing_get_deadlock_not_a_hang() {
    check(&ring(2, Waiting::Park), 2);
}

#[test]
fn three_thread_ring_gets_deadlock_not_a_hang() {
    check(&ring(3, Waiting::Park), 3);
}

#[test]
fn spinning_waiters_are_checked_too() {
    check(&ring(2, Waiting::Spin), 2);
}

#[test]
fn adaptive_waiters_are_checked_too() {
    check(&ring(2, Waiting::Adaptive), 2);
    check(&ring(3, Waiting::Adaptive), 3);
}
