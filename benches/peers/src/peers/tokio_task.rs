//! The hand-written tokio "actor": a task that owns its state and serves an
//! unbounded `mpsc` channel, replying through a `oneshot` carried in the
//! request. What the tokio actor frameworks build on, with none of their
//! machinery. Runs on a current-thread runtime (every task on the thread
//! that calls `block_on`) and on a multi-thread runtime (one worker per
//! core); the asking or pinging side is a task of the same runtime.

use std::hint::black_box;
use std::time::Instant;

use hdrhistogram::Histogram;
use tokio::runtime::{Builder, Runtime};
use tokio::sync::{mpsc, oneshot};

use super::kaspar::sum_below;
use crate::report::{histogram, per_s, record};

fn runtime(multi_thread: bool) -> Runtime {
    let mut b = if multi_thread {
        Builder::new_multi_thread()
    } else {
        Builder::new_current_thread()
    };
    b.enable_all().build().expect("tokio runtime")
}

enum Req {
    Add(u64, oneshot::Sender<u64>),
    Tell(u64),
}

fn spawn_counter() -> mpsc::UnboundedSender<Req> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut total = 0u64;
        while let Some(req) = rx.recv().await {
            match req {
                Req::Add(x, reply) => {
                    total += x;
                    let _ = reply.send(total);
                }
                Req::Tell(x) => total += x,
            }
        }
    });
    tx
}

async fn add(counter: &mpsc::UnboundedSender<Req>, x: u64) -> u64 {
    let (reply, answer) = oneshot::channel();
    counter.send(Req::Add(x, reply)).expect("counter alive");
    answer.await.expect("counter replies")
}

pub fn ask(multi_thread: bool, n: u64) -> Histogram<u64> {
    runtime(multi_thread).block_on(async {
        tokio::spawn(async move {
            let counter = spawn_counter();
            let mut hist = histogram();
            let mut last = 0;
            for i in 0..n {
                let t = Instant::now();
                last = black_box(add(&counter, i).await);
                record(&mut hist, t);
            }
            assert_eq!(last, sum_below(n), "tokio ask: wrong total");
            hist
        })
        .await
        .unwrap()
    })
}

pub fn tell(multi_thread: bool, n: u64) -> f64 {
    runtime(multi_thread).block_on(async {
        tokio::spawn(async move {
            let counter = spawn_counter();
            let t = Instant::now();
            for i in 0..n {
                counter.send(Req::Tell(i)).expect("counter alive");
            }
            let total = add(&counter, 0).await;
            let r = per_s(n, t.elapsed());
            assert_eq!(total, sum_below(n), "tokio tell: wrong total");
            r
        })
        .await
        .unwrap()
    })
}

pub fn ping_pong(multi_thread: bool, n: u64) -> f64 {
    runtime(multi_thread).block_on(async {
        let (to_pong, mut pong_rx) = mpsc::unbounded_channel::<u64>();
        let (to_ping, mut ping_rx) = mpsc::unbounded_channel::<u64>();
        tokio::spawn(async move {
            while let Some(ball) = pong_rx.recv().await {
                if to_ping.send(ball + 1).is_err() {
                    break;
                }
            }
        });
        let ping = tokio::spawn(async move {
            let t = Instant::now();
            let mut ball = 0;
            for _ in 0..n {
                to_pong.send(ball).expect("pong alive");
                ball = ping_rx.recv().await.expect("pong alive");
            }
            (ball, t.elapsed())
        });
        let (ball, elapsed) = ping.await.unwrap();
        assert_eq!(ball, n, "tokio ping-pong: wrong number of round trips");
        per_s(n, elapsed)
    })
}
