//! An `ask(..).await` on a thread of the runtime that hosts the actor's
//! pool runs the scheduled activation itself, in its first poll, rather
//! than wait for a runner task (`PoolConfig::tokio`; the `tokio` module of
//! `delivery::sched`): answered in that poll; not from another runtime;
//! only the awaited actor's activation (or its group's); within the task's cooperative
//! budget; and without keeping a second actor from running beside it on a
//! multi-thread runtime.
//!
//! `cargo test --features tokio --test pool_tokio_help`

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use tokio::runtime::Builder;

#[path = "support/hosted.rs"]
mod hosted;
use hosted::{hosted_on, watchdog};

pub struct Add(pub u64);
pub struct WhereAmI;
pub struct Mark(pub Arc<AtomicBool>);
/// Waits, spinning, until `Meet::0` counts two arrivals (or a deadline
/// passes); answers whether the other arrived.
pub struct Meet(pub Arc<AtomicUsize>);

#[actor]
#[derive(Default)]
pub struct Counter {
    n: u64,
}

#[actor]
impl Counter {
    #[handler(Add)]
    fn add(&mut self, m: Add, _ctx: &mut Ctx<Self>) -> u64 {
        self.n += m.0;
        self.n
    }

    #[handler(WhereAmI)]
    fn where_am_i(&mut self, _m: WhereAmI, _ctx: &mut Ctx<Self>) -> ThreadId {
        std::thread::current().id()
    }

    #[handler(Mark)]
    fn mark(&mut self, m: Mark, _ctx: &mut Ctx<Self>) {
        m.0.store(true, Ordering::SeqCst);
    }

    #[handler(Meet)]
    fn meet(&mut self, m: Meet, _ctx: &mut Ctx<Self>) -> bool {
        m.0.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(5);
        while m.0.load(Ordering::SeqCst) < 2 {
            if Instant::now() >= deadline {
                return false;
            }
            std::hint::spin_loop();
        }
        true
    }
}

#[test]
fn an_awaited_ask_on_the_hosting_runtime_is_answered_in_its_first_poll() {
    let (first, here, there) = watchdog("a helped ask", || {
        let rt = Builder::new_current_thread().build().unwrap();
        let system = hosted_on(rt.handle().clone());
        let counter = system.spawn(Counter::default()).pooled().start();
        let got = rt.block_on(async {
            let mut ask = pin!(counter.ask(Add(5)).unwrap());
            let first = poll_fn(|cx| Poll::Ready(ask.as_mut().poll(cx))).await;
            let there = counter.ask(WhereAmI).unwrap().await.unwrap();
            (first.is_ready(), std::thread::current().id(), there)
        });
        system.shutdown();
        got
    });
    assert!(
        first,
        "the first poll ran the activation and took the reply"
    );
    assert_eq!(here, there, "the handler ran on the asking thread");
}

#[group]
pub struct Desk {
    pub counter: Addr<Counter>,
}

#[test]
fn a_member_of_a_hosted_group_is_answered_in_the_first_poll_too() {
    let (first, answered) = watchdog("a helped ask to a group member", || {
        let rt = Builder::new_current_thread().build().unwrap();
        let system = hosted_on(rt.handle().clone());
        let desk = system
            .spawn_group::<Desk>((Counter::default(),))
            .pooled()
            .start();
        let got = rt.block_on(async {
            let mut ask = pin!(desk.counter.ask(Add(3)).unwrap());
            let first = poll_fn(|cx| Poll::Ready(ask.as_mut().poll(cx))).await;
            let first_ready = first.is_ready();
            let answered = match first {
                Poll::Ready(r) => r.unwrap(),
                Poll::Pending => ask.await.unwrap(),
            };
            (first_ready, answered)
        });
        system.shutdown();
        got
    });
    assert!(first, "the first poll ran the group's activation");
    assert_eq!(answered, 3);
}

#[test]
fn the_first_poll_runs_only_the_awaited_actors_activation() {
    let (marked_in_first_poll, first_ready, answered, marked) =
        watchdog("another actor first", || {
            let rt = Builder::new_current_thread().build().unwrap();
            let system = hosted_on(rt.handle().clone());
            let other = system.spawn(Counter::default()).pooled().start();
            let awaited = system.spawn(Counter::default()).pooled().start();
            let mark = Arc::new(AtomicBool::new(false));
            let got = rt.block_on(async {
                // `other` is scheduled first: it heads the pool's queue.
                other.send(Mark(Arc::clone(&mark))).unwrap();
                let mut ask = pin!(awaited.ask(Add(7)).unwrap());
                let first = poll_fn(|cx| Poll::Ready(ask.as_mut().poll(cx))).await;
                let marked_then = mark.load(Ordering::SeqCst);
                let first_ready = first.is_ready();
                let answered = match first {
                    Poll::Ready(r) => r.unwrap(),
                    Poll::Pending => ask.await.unwrap(),
                };
                (marked_then, first_ready, answered)
            });
            system.shutdown();
            (got.0, got.1, got.2, mark.load(Ordering::SeqCst))
        });
    assert!(
        !marked_in_first_poll && !first_ready,
        "the other actor's activation is not the asking task's to run"
    );
    assert_eq!(answered, 7);
    assert!(marked, "the other actor ran, on the runner");
}

#[test]
fn an_ask_awaited_on_another_runtime_leaves_the_activation_to_the_host() {
    let (here, there) = watchdog("an ask from another runtime", || {
        let host = Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let system = hosted_on(host.handle().clone());
        let counter = system.spawn(Counter::default()).pooled().start();
        let other = Builder::new_current_thread().build().unwrap();
        let got = other.block_on(async {
            let there = counter.ask(WhereAmI).unwrap().await.unwrap();
            (std::thread::current().id(), there)
        });
        system.shutdown();
        got
    });
    assert_ne!(here, there, "only the hosting runtime's threads help");
}

#[test]
fn a_loop_of_helped_asks_still_yields_to_the_runtimes_other_tasks() {
    let asks = watchdog("a loop of helped asks", || {
        let rt = Builder::new_current_thread().build().unwrap();
        let system = hosted_on(rt.handle().clone());
        let counter = system.spawn(Counter::default()).pooled().start();
        let ran = Arc::new(AtomicBool::new(false));
        let asks = rt.block_on(async {
            let flag = Arc::clone(&ran);
            let _other = tokio::spawn(async move { flag.store(true, Ordering::SeqCst) });
            let mut asks = 0u64;
            while !ran.load(Ordering::SeqCst) && asks < 10_000 {
                counter.ask(Add(1)).unwrap().await.unwrap();
                asks += 1;
            }
            asks
        });
        system.shutdown();
        asks
    });
    // tokio's budget is 128 units a poll; each helped ask spends one.
    assert!(
        asks <= 1_000,
        "the other task ran only after {asks} asks: the helped asks did not spend the budget"
    );
}

#[test]
fn a_task_awaiting_one_of_two_asks_lets_the_other_actor_run_beside_it() {
    let (a, b) = watchdog("two asks on a multi-thread runtime", || {
        let rt = Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let system = hosted_on(rt.handle().clone());
        let first = system.spawn(Counter::default()).pooled().start();
        let second = system.spawn(Counter::default()).pooled().start();
        let met = rt.block_on(async move {
            tokio::spawn(async move {
                let arrived = Arc::new(AtomicUsize::new(0));
                // Both are scheduled before either is awaited: the first
                // await runs the first actor here, and the second must
                // run on the other worker meanwhile, or neither meets.
                let a = first.ask(Meet(Arc::clone(&arrived))).unwrap();
                let b = second.ask(Meet(arrived)).unwrap();
                (a.await.unwrap(), b.await.unwrap())
            })
            .await
            .unwrap()
        });
        system.shutdown();
        met
    });
    assert!(a && b, "the two handlers ran side by side ({a}, {b})");
}
