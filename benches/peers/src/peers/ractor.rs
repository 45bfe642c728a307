//! ractor: `impl Actor` with a message enum, `call!` for request-reply,
//! `cast` for tells, on a multi-threaded tokio runtime.

use std::hint::black_box;
use std::time::Instant;

use hdrhistogram::Histogram;
use ractor::{call, Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::oneshot;

use crate::report::{histogram, per_s, record};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

pub struct Counter;

pub enum CounterMsg {
    Add(u64, RpcReplyPort<u64>),
    Tell(u64),
}

impl Actor for Counter {
    type Msg = CounterMsg;
    type State = u64;
    type Arguments = ();

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        _args: (),
    ) -> Result<u64, ActorProcessingErr> {
        Ok(0)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: CounterMsg,
        total: &mut u64,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            CounterMsg::Add(x, reply) => {
                *total = total.wrapping_add(x);
                let _ = reply.send(*total);
            }
            CounterMsg::Tell(x) => *total = total.wrapping_add(x),
        }
        Ok(())
    }
}

pub fn ask(n: u64) -> Histogram<u64> {
    let rt = runtime();
    // From a task of the runtime, as a tokio program would ask.
    rt.block_on(async {
        tokio::spawn(async move {
            let (counter, handle) = Actor::spawn(None, Counter, ()).await.unwrap();
            let mut hist = histogram();
            for i in 0..n {
                let t = Instant::now();
                black_box(call!(counter, CounterMsg::Add, i).unwrap());
                record(&mut hist, t);
            }
            counter.stop(None);
            handle.await.unwrap();
            hist
        })
        .await
        .unwrap()
    })
}

pub fn tell(n: u64) -> f64 {
    let rt = runtime();
    // From a task of the runtime, as a tokio program would ask.
    rt.block_on(async {
        tokio::spawn(async move {
            let (counter, handle) = Actor::spawn(None, Counter, ()).await.unwrap();
            let t = Instant::now();
            for i in 0..n {
                counter.cast(CounterMsg::Tell(i)).unwrap();
            }
            black_box(call!(counter, CounterMsg::Add, 0).unwrap());
            let r = per_s(n, t.elapsed());
            counter.stop(None);
            handle.await.unwrap();
            r
        })
        .await
        .unwrap()
    })
}

pub struct Ponger;

impl Actor for Ponger {
    type Msg = (u64, ActorRef<PingMsg>);
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<Self::Msg>, _: ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        (ball, from): Self::Msg,
        _: &mut (),
    ) -> Result<(), ActorProcessingErr> {
        from.cast(PingMsg::Ball(ball + 1))?;
        Ok(())
    }
}

pub enum PingMsg {
    Start(u64, oneshot::Sender<()>),
    Ball(u64),
}

pub struct Pinger;

pub struct PingState {
    pong: ActorRef<(u64, ActorRef<PingMsg>)>,
    left: u64,
    done: Option<oneshot::Sender<()>>,
}

impl Actor for Pinger {
    type Msg = PingMsg;
    type State = PingState;
    type Arguments = ActorRef<(u64, ActorRef<PingMsg>)>;

    async fn pre_start(
        &self,
        _: ActorRef<Self::Msg>,
        pong: Self::Arguments,
    ) -> Result<PingState, ActorProcessingErr> {
        Ok(PingState {
            pong,
            left: 0,
            done: None,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: PingMsg,
        st: &mut PingState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            PingMsg::Start(rounds, done) => {
                st.left = rounds;
                st.done = Some(done);
                st.pong.cast((0, myself))?;
            }
            PingMsg::Ball(ball) => {
                st.left -= 1;
                if st.left == 0 {
                    let _ = st.done.take().unwrap().send(());
                } else {
                    st.pong.cast((ball, myself))?;
                }
            }
        }
        Ok(())
    }
}

pub fn pingpong(n: u64) -> f64 {
    runtime().block_on(async {
        let (pong, pong_handle) = Actor::spawn(None, Ponger, ()).await.unwrap();
        let (ping, ping_handle) = Actor::spawn(None, Pinger, pong.clone()).await.unwrap();
        let (tx, rx) = oneshot::channel();
        let t = Instant::now();
        ping.cast(PingMsg::Start(n, tx)).unwrap();
        rx.await.unwrap();
        let r = per_s(n, t.elapsed());
        ping.stop(None);
        pong.stop(None);
        ping_handle.await.unwrap();
        pong_handle.await.unwrap();
        r
    })
}
