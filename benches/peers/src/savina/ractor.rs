//! Savina (all but chameneos, in `chameneos/`) on ractor: `impl Actor` with a message enum and a separate
//! state, `cast` for every send (ractor's mailboxes are unbounded), on a
//! multi-thread tokio runtime. A message that Savina answers to its sender
//! carries the sender's `ActorRef`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use super::{on_tokio, perform_computation, verify, Params, THETA};

pub(super) type Handled = Result<(), ActorProcessingErr>;

pub(super) async fn spawn<A: Actor>(actor: A, args: A::Arguments) -> ActorRef<A::Msg> {
    Actor::spawn(None, actor, args).await.expect("spawn").0
}

// ---- ping_pong ----

pub struct Ponger;
pub struct Pinger;

pub enum PingMsg {
    Serve(u64, UnboundedSender<u64>),
    Pong(u64),
}

pub struct PingState {
    left: u64,
    pong: ActorRef<ActorRef<PingMsg>>,
    done: Option<UnboundedSender<u64>>,
}

impl Actor for Ponger {
    type Msg = ActorRef<PingMsg>;
    type State = u64;
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<Self::Msg>, _: ()) -> Result<u64, ActorProcessingErr> {
        Ok(0)
    }

    async fn handle(&self, _: ActorRef<Self::Msg>, from: Self::Msg, pings: &mut u64) -> Handled {
        *pings += 1;
        Ok(from.cast(PingMsg::Pong(*pings))?)
    }
}

impl Actor for Pinger {
    type Msg = PingMsg;
    type State = PingState;
    type Arguments = ActorRef<ActorRef<PingMsg>>;

    async fn pre_start(
        &self,
        _: ActorRef<PingMsg>,
        pong: Self::Arguments,
    ) -> Result<PingState, ActorProcessingErr> {
        Ok(PingState {
            left: 0,
            pong,
            done: None,
        })
    }

    async fn handle(&self, myself: ActorRef<PingMsg>, msg: PingMsg, st: &mut PingState) -> Handled {
        match msg {
            PingMsg::Serve(pings, done) => {
                st.left = pings;
                st.done = Some(done);
                st.pong.cast(myself)?;
            }
            PingMsg::Pong(n) => {
                st.left -= 1;
                if st.left > 0 {
                    st.pong.cast(myself)?;
                } else {
                    st.done.take().unwrap().send(n)?;
                }
            }
        }
        Ok(())
    }
}

pub fn ping_pong(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let pong = spawn(Ponger, ()).await;
        let ping = spawn(Pinger, pong).await;
        ping.cast(PingMsg::Serve(p.pings, done)).unwrap();
        let pongs = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::ping_pong(&p, pongs);
        elapsed
    })
}

// ---- counting ----

pub struct Counter;
pub struct Producer;

pub enum CounterMsg {
    Increment,
    Retrieve(ActorRef<ProducerMsg>),
}

pub enum ProducerMsg {
    Produce(u64, UnboundedSender<u64>),
    Total(u64),
}

impl Actor for Counter {
    type Msg = CounterMsg;
    type State = u64;
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<CounterMsg>, _: ()) -> Result<u64, ActorProcessingErr> {
        Ok(0)
    }

    async fn handle(&self, _: ActorRef<CounterMsg>, msg: CounterMsg, count: &mut u64) -> Handled {
        match msg {
            CounterMsg::Increment => *count += 1,
            CounterMsg::Retrieve(from) => from.cast(ProducerMsg::Total(*count))?,
        }
        Ok(())
    }
}

impl Actor for Producer {
    type Msg = ProducerMsg;
    type State = (ActorRef<CounterMsg>, Option<UnboundedSender<u64>>);
    type Arguments = ActorRef<CounterMsg>;

    async fn pre_start(
        &self,
        _: ActorRef<ProducerMsg>,
        counter: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok((counter, None))
    }

    async fn handle(
        &self,
        myself: ActorRef<ProducerMsg>,
        msg: ProducerMsg,
        st: &mut Self::State,
    ) -> Handled {
        match msg {
            ProducerMsg::Produce(n, done) => {
                for _ in 0..n {
                    st.0.cast(CounterMsg::Increment)?;
                }
                st.1 = Some(done);
                st.0.cast(CounterMsg::Retrieve(myself))?;
            }
            ProducerMsg::Total(total) => st.1.take().unwrap().send(total)?,
        }
        Ok(())
    }
}

pub fn counting(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let counter = spawn(Counter, ()).await;
        let producer = spawn(Producer, counter).await;
        producer.cast(ProducerMsg::Produce(p.counts, done)).unwrap();
        let total = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::counting(&p, total);
        elapsed
    })
}

// ---- thread_ring ----

pub struct RingNode;

pub enum RingMsg {
    Link(ActorRef<RingMsg>),
    Token(u64),
}

pub struct RingState {
    id: usize,
    next: Option<ActorRef<RingMsg>>,
    done: UnboundedSender<usize>,
}

impl Actor for RingNode {
    type Msg = RingMsg;
    type State = RingState;
    type Arguments = (usize, UnboundedSender<usize>);

    async fn pre_start(
        &self,
        _: ActorRef<RingMsg>,
        (id, done): Self::Arguments,
    ) -> Result<RingState, ActorProcessingErr> {
        Ok(RingState {
            id,
            next: None,
            done,
        })
    }

    async fn handle(&self, _: ActorRef<RingMsg>, msg: RingMsg, st: &mut RingState) -> Handled {
        match msg {
            RingMsg::Link(next) => st.next = Some(next),
            RingMsg::Token(0) => st.done.send(st.id)?,
            RingMsg::Token(left) => st.next.as_ref().unwrap().cast(RingMsg::Token(left - 1))?,
        }
        Ok(())
    }
}

pub fn thread_ring(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let mut ring = Vec::new();
        for id in 0..p.ring_actors {
            ring.push(spawn(RingNode, (id, done.clone())).await);
        }
        for (i, node) in ring.iter().enumerate() {
            node.cast(RingMsg::Link(ring[(i + 1) % ring.len()].clone()))
                .unwrap();
        }
        ring[0].cast(RingMsg::Token(p.ring_hops)).unwrap();
        let last = finished.recv().await.unwrap();
        let elapsed = t.elapsed();
        verify::thread_ring(&p, last);
        elapsed
    })
}

// ---- fork_join ----

pub struct Worker;
pub struct Work;

impl Actor for Worker {
    type Msg = Work;
    /// Seen, expected, where to report.
    type State = (u64, u64, UnboundedSender<u64>);
    type Arguments = (u64, UnboundedSender<u64>);

    async fn pre_start(
        &self,
        _: ActorRef<Work>,
        (expected, done): Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok((0, expected, done))
    }

    async fn handle(&self, _: ActorRef<Work>, _msg: Work, st: &mut Self::State) -> Handled {
        black_box(perform_computation(THETA));
        st.0 += 1;
        if st.0 == st.1 {
            st.2.send(st.0)?;
        }
        Ok(())
    }
}

pub fn fork_join(p: &Params) -> Duration {
    let p = *p;
    on_tokio(async move {
        let (done, mut finished) = unbounded_channel();
        let t = Instant::now();
        let mut workers = Vec::new();
        for _ in 0..p.fj_workers {
            workers.push(spawn(Worker, (p.fj_msgs, done.clone())).await);
        }
        for _ in 0..p.fj_msgs {
            for w in &workers {
                w.cast(Work).unwrap();
            }
        }
        let mut seen = Vec::new();
        for _ in 0..workers.len() {
            seen.push(finished.recv().await.unwrap());
        }
        let elapsed = t.elapsed();
        verify::fork_join(&p, &seen);
        elapsed
    })
}
