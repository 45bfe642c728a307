//! iceoryx2: the raw API (`ipc` services, what a hand-written client
//! does; and `ipc_threadsafe`, the flavour the link needs to be
//! `Send`) and kaspar-remote's `LinkTx` / `LinkRx`.

use super::kaspar_case::Medium;
use super::{measure, Plan, Session, FLAG, FRAME, PATIENCE, STOP};
use iceoryx2::config::Config;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport};
use kaspar_remote::{IdleStrategy, LinkError, LinkRx, LinkTx, Transport};
use std::time::Instant;

/// The iceoryx2 namespace of every run (sessions keep runs apart).
const NAMESPACE: &str = "bench";

type RawPorts<S> = (Node<S>, Publisher<S, [u8], ()>, Subscriber<S, [u8], ()>);

/// A node and a publisher on `out`, a subscriber on `inn`, in the
/// bench's namespace; waits until the peer's subscriber is there.
fn raw_ports<S: Service>(out: &str, inn: &str) -> RawPorts<S> {
    let mut config = Config::global_config().clone();
    config.global.prefix = FileName::new(format!("kaspar_{NAMESPACE}_").as_bytes()).unwrap();
    let node = NodeBuilder::new()
        .config(&config)
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<S>()
        .unwrap();
    let open = |name: &str| {
        node.service_builder(&ServiceName::new(name).unwrap())
            .publish_subscribe::<[u8]>()
            .open_or_create()
            .unwrap()
    };
    let (tx_service, rx_service) = (open(out), open(inn));
    let publisher = tx_service
        .publisher_builder()
        .initial_max_slice_len(FRAME)
        .create()
        .unwrap();
    let subscriber = rx_service.subscriber_builder().create().unwrap();
    let deadline = Instant::now() + PATIENCE;
    while tx_service.dynamic_config().number_of_subscribers() == 0 {
        assert!(Instant::now() < deadline, "the peer never subscribed");
        std::thread::yield_now();
    }
    (node, publisher, subscriber)
}

fn raw_send<S: Service>(publisher: &Publisher<S, [u8], ()>, frame: &[u8]) {
    let sample = publisher.loan_slice_uninit(frame.len()).unwrap();
    sample.write_from_slice(frame).send().unwrap();
}

pub(super) fn raw_ping<S: Service>(session: &Session, plan: Plan) -> Vec<u64> {
    session.spawn_echo(&[]);
    let session = session.name();
    let (_node, publisher, subscriber) = raw_ports::<S>(
        &format!("bench/{session}/echo"),
        &format!("bench/{session}/ping"),
    );
    measure(
        plan,
        |frame| raw_send(&publisher, frame),
        |back| match subscriber.receive().unwrap() {
            Some(sample) => {
                back.copy_from_slice(sample.payload());
                true
            }
            None => false,
        },
    )
}

pub(super) fn raw_echo<S: Service>(session: &str) {
    let (_node, publisher, subscriber) = raw_ports::<S>(
        &format!("bench/{session}/ping"),
        &format!("bench/{session}/echo"),
    );
    let mut quiet_since = Instant::now();
    while quiet_since.elapsed() < PATIENCE {
        if let Some(sample) = subscriber.receive().unwrap() {
            if sample.payload()[FLAG] == STOP {
                return;
            }
            raw_send(&publisher, sample.payload());
            quiet_since = Instant::now();
        }
    }
}

fn link_ends(out: &str, inn: &str) -> (Iceoryx2Transport, impl LinkTx, impl LinkRx) {
    let t = Iceoryx2Transport::new(
        Iceoryx2Config::default()
            .namespace(NAMESPACE)
            .max_frame_len(FRAME),
    )
    .unwrap();
    let rx = t.listen(inn).unwrap();
    let tx = t.connect(out, PATIENCE).unwrap();
    (t, tx, rx)
}

fn link_send(tx: &mut impl LinkTx, frame: &[u8]) {
    loop {
        match tx.send_frame(frame.len(), &mut |b| b.copy_from_slice(frame)) {
            Ok(()) => return,
            Err(LinkError::Full) => std::hint::spin_loop(),
            Err(e) => panic!("send: {e}"),
        }
    }
}

pub(super) fn link_ping(session: &Session, plan: Plan) -> Vec<u64> {
    session.spawn_echo(&[]);
    let session = session.name();
    let (_t, mut tx, mut rx) = link_ends(&format!("{session}/echo"), &format!("{session}/ping"));
    // `measure` needs both closures at once: the link halves are
    // separate values, so each closure owns one.
    measure(
        plan,
        |frame| link_send(&mut tx, frame),
        |back| rx.poll(1, &mut |f| back.copy_from_slice(f)).unwrap() == 1,
    )
}

pub(super) fn link_echo(session: &str) {
    let (_t, mut tx, mut rx) = link_ends(&format!("{session}/ping"), &format!("{session}/echo"));
    let mut quiet_since = Instant::now();
    let mut stop = false;
    while !stop && quiet_since.elapsed() < PATIENCE {
        let mut frame = [0u8; FRAME];
        if rx.poll(1, &mut |f| frame.copy_from_slice(f)).unwrap() == 1 {
            stop = frame[FLAG] == STOP;
            if !stop {
                link_send(&mut tx, &frame);
            }
            quiet_since = Instant::now();
        }
    }
}

/// `iceoryx2/kaspar`: nodes on iceoryx2 in the bench's namespace, both
/// busy-polling.
pub(super) struct Iox;

impl Medium for Iox {
    type T = Iceoryx2Transport;
    const IDLE: IdleStrategy = IdleStrategy::Spin;

    fn ping_side(_session: &str) -> (Iceoryx2Transport, Vec<(&'static str, String)>) {
        (transport(), Vec::new())
    }

    fn echo_side(_session: &str) -> Iceoryx2Transport {
        transport()
    }
}

fn transport() -> Iceoryx2Transport {
    Iceoryx2Transport::new(Iceoryx2Config::default().namespace(NAMESPACE))
        .expect("an iceoryx2 transport")
}
