//! Aeron: the raw client API (rusteron: an exclusive publication and a
//! subscription of our own, claim and poll in place) and kaspar-remote's
//! `LinkTx` / `LinkRx`, over two media:
//!
//! - [`Ipc`] (`aeron_ipc/*`): one media driver, embedded in the ping
//!   process; the echo process uses it as an external driver. The data
//!   goes from client to client through the driver's shared log buffers.
//! - [`Udp`] (`aeron_udp/*`): UDP on 127.0.0.1, a media driver embedded in
//!   each process (as two hosts would have). A `kaspar` case still needs
//!   its `announce` / `discover` records carried between the processes:
//!   they go over IPC on the ping process's driver ([`Split`]), off the
//!   measured path.
//!
//! The `kaspar` cases (`remote/kaspar_case.rs`) run over the same setup.

use std::ffi::CString;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use kaspar_remote::link::Announcement;
use kaspar_remote::transport::aeron::{
    AeronConfig, AeronLinkRx, AeronLinkTx, AeronTransport, Endpoint,
};
use kaspar_remote::{IdleStrategy, LinkError, LinkRx, LinkTx, Transport};
use rusteron_client::{Aeron, AeronExclusivePublication, AeronSubscription, Handlers};

use super::kaspar_case::{self, Medium};
use super::{measure, Plan, Session, FLAG, FRAME, PATIENCE, STOP};

/// The ping process's media driver directory, for the echo process.
const DIR: &str = "KASPAR_BENCH_REMOTE_AERON_DIR";
/// The UDP ports of the ping and the echo process's inboxes (`ping/echo`).
const PORTS: &str = "KASPAR_BENCH_REMOTE_AERON_PORTS";
/// The stream ids of the two inboxes.
const PING_STREAM: i32 = 31;
const ECHO_STREAM: i32 = 32;

/// How one Aeron medium is set up on either side, and how its pollers
/// wait.
pub(super) trait AeronMedium {
    /// Where the inbox of `side` ("ping" or "echo") is.
    fn inbox(side: &str, ports: (u16, u16)) -> Endpoint;

    /// The ping side's transport (its embedded driver).
    fn ping_config() -> AeronConfig {
        AeronConfig::embedded()
    }

    /// The echo side's transport, given the ping side's driver directory.
    fn echo_config(ping_dir: &str) -> AeronConfig;

    /// Whether the echo side's `announce` / `discover` must go through the
    /// ping side's driver (its own driver does not reach the other
    /// process over IPC).
    const OWN_DRIVER: bool;

    /// A raw or link poller's step while it waits for a frame or for room.
    fn idle();

    /// How the `kaspar` case's nodes wait: the same as `idle`, as near as
    /// an [`IdleStrategy`] says it.
    const NODE_IDLE: IdleStrategy;
}

/// Aeron IPC through one media driver. Both sides spin while they wait.
pub(super) struct Ipc;

impl AeronMedium for Ipc {
    fn inbox(side: &str, _ports: (u16, u16)) -> Endpoint {
        Endpoint::ipc(stream(side))
    }

    fn echo_config(ping_dir: &str) -> AeronConfig {
        AeronConfig::external(ping_dir)
    }

    const OWN_DRIVER: bool = false;

    fn idle() {
        std::hint::spin_loop();
    }

    const NODE_IDLE: IdleStrategy = IdleStrategy::Spin;
}

/// Aeron UDP on 127.0.0.1, a media driver in each process. Both sides yield
/// while they wait: the media drivers' threads carry the data and must
/// run, and a spinning poller on a machine with no spare core starves them
/// until the next scheduler tick (4 ms per hop measured on the 2-core dev
/// VM).
pub(super) struct Udp;

impl AeronMedium for Udp {
    fn inbox(side: &str, ports: (u16, u16)) -> Endpoint {
        let port = if side == "ping" { ports.0 } else { ports.1 };
        Endpoint::udp(SocketAddr::from(([127, 0, 0, 1], port)), stream(side))
    }

    fn echo_config(_ping_dir: &str) -> AeronConfig {
        AeronConfig::embedded()
    }

    const OWN_DRIVER: bool = true;

    fn idle() {
        std::thread::yield_now();
    }

    const NODE_IDLE: IdleStrategy = IdleStrategy::Backoff {
        spin: Duration::ZERO,
        yield_for: Duration::from_secs(3600),
        max_sleep: Duration::from_millis(1),
    };
}

fn stream(side: &str) -> i32 {
    if side == "ping" {
        PING_STREAM
    } else {
        ECHO_STREAM
    }
}

/// `config` with both inboxes in its directory, under the raw and link
/// cases' names ("ping", "echo") and the `kaspar` case's node endpoints.
fn with_inboxes<M: AeronMedium>(
    config: AeronConfig,
    session: &str,
    ports: (u16, u16),
) -> AeronConfig {
    ["ping", "echo"].into_iter().fold(config, |c, side| {
        c.endpoint(side, M::inbox(side, ports))
            .endpoint(kaspar_case::endpoint(session, side), M::inbox(side, ports))
    })
}

/// The ping side's transport and what the echo process needs to know.
fn ping_transport<M: AeronMedium>(session: &str) -> (AeronTransport, Vec<(&'static str, String)>) {
    let ports = (free_port(), free_port());
    let t = AeronTransport::launch(with_inboxes::<M>(M::ping_config(), session, ports))
        .expect("the ping side's aeron transport");
    let env = vec![
        (DIR, t.aeron_dir().to_string_lossy().into_owned()),
        (PORTS, format!("{}/{}", ports.0, ports.1)),
    ];
    (t, env)
}

/// The echo side's transport (the ping side's driver directory and the
/// inboxes' ports come from the environment).
fn echo_transport<M: AeronMedium>(session: &str) -> AeronTransport {
    let dir = ping_dir();
    let ports = std::env::var(PORTS).expect("the inboxes' ports");
    let (a, b) = ports.split_once('/').expect("two ports");
    let ports = (a.parse().expect("a port"), b.parse().expect("a port"));
    AeronTransport::launch(with_inboxes::<M>(M::echo_config(&dir), session, ports))
        .expect("the echo side's aeron transport")
}

fn ping_dir() -> String {
    std::env::var(DIR).expect("the ping side's driver directory")
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("probe a UDP port on 127.0.0.1")
        .port()
}

/// A transport whose links go through `data` and whose `announce` /
/// `discover` go through `registry` (when set): another media driver,
/// the one the processes share.
pub(super) struct Split {
    data: AeronTransport,
    registry: Option<AeronTransport>,
}

impl Split {
    fn registry(&self) -> &AeronTransport {
        self.registry.as_ref().unwrap_or(&self.data)
    }
}

impl Transport for Split {
    type Tx = AeronLinkTx;
    type Rx = AeronLinkRx;

    fn listen(&self, endpoint: &str) -> Result<AeronLinkRx, LinkError> {
        self.data.listen(endpoint)
    }

    fn connect(&self, endpoint: &str, timeout: Duration) -> Result<AeronLinkTx, LinkError> {
        self.data.connect(endpoint, timeout)
    }

    fn announce(&self, name: &str, record: &[u8]) -> Result<Announcement, LinkError> {
        self.registry().announce(name, record)
    }

    fn discover(&self, name: &str) -> Result<Option<Vec<u8>>, LinkError> {
        self.registry().discover(name)
    }

    fn liveness_timeout(&self) -> Duration {
        self.data.liveness_timeout()
    }
}

impl<M: AeronMedium> Medium for M {
    type T = Split;
    const IDLE: IdleStrategy = M::NODE_IDLE;

    fn ping_side(session: &str) -> (Split, Vec<(&'static str, String)>) {
        let (data, env) = ping_transport::<M>(session);
        (
            Split {
                data,
                registry: None,
            },
            env,
        )
    }

    /// With a driver of its own, the echo side's records go through the
    /// ping side's driver, which both processes reach.
    fn echo_side(session: &str) -> Split {
        let registry = M::OWN_DRIVER.then(|| {
            AeronTransport::launch(AeronConfig::external(ping_dir()))
                .expect("the ping side's driver")
        });
        Split {
            data: echo_transport::<M>(session),
            registry,
        }
    }
}

/// Raw rusteron: a client of our own on the transport's driver, with a
/// publication to the peer's inbox and a subscription to ours.
struct Raw {
    publication: AeronExclusivePublication,
    subscription: AeronSubscription,
    // Dropped last: the publication and subscription belong to it.
    _client: Aeron,
}

impl Raw {
    /// Subscribes to `inbox`, publishes to `to`, and waits until the peer
    /// has subscribed.
    fn open(t: &AeronTransport, to: &str, inbox: &str) -> Raw {
        let client = Aeron::connect_dir(&t.aeron_dir().to_string_lossy()).expect("a raw client");
        let (to, inbox) = (t.resolve(to).unwrap(), t.resolve(inbox).unwrap());
        let channel = |e: &Endpoint| CString::new(e.channel.clone()).unwrap();
        let subscription = client
            .add_subscription(
                &channel(&inbox),
                inbox.stream_id,
                Handlers::NONE,
                Handlers::NONE,
                PATIENCE,
            )
            .expect("a raw subscription");
        let publication = client
            .add_exclusive_publication(&channel(&to), to.stream_id, PATIENCE)
            .expect("a raw publication");
        let deadline = Instant::now() + PATIENCE;
        while !publication.is_connected() {
            assert!(Instant::now() < deadline, "the peer never subscribed");
            std::thread::sleep(Duration::from_millis(1));
        }
        Raw {
            publication,
            subscription,
            _client: client,
        }
    }

    /// Claims, writes and commits one frame; `false` when there is no room.
    fn send(&self, bytes: &[u8]) -> bool {
        match self.publication.try_claim_owned(bytes.len()) {
            Ok(mut claim) => {
                claim.data().copy_from_slice(bytes);
                claim.commit().is_ok()
            }
            Err(e) if e.is_retryable() => false,
            Err(e) => panic!("raw send: {e:?}"),
        }
    }

    /// Copies the next frame into `back`; `false` when none is there.
    fn poll(&self, back: &mut [u8; FRAME]) -> bool {
        let mut got = false;
        self.subscription
            .poll_fn(
                |bytes, _| {
                    back.copy_from_slice(bytes);
                    got = true;
                },
                1,
            )
            .expect("raw poll");
        got
    }
}

pub(super) fn raw_ping<M: AeronMedium>(session: &Session, plan: Plan) -> Vec<u64> {
    let (t, env) = ping_transport::<M>(session.name());
    session.spawn_echo(&env);
    let raw = Raw::open(&t, "echo", "ping");
    let rt = measure(
        plan,
        |frame| {
            while !raw.send(frame) {
                M::idle();
            }
        },
        |back| raw.poll(back) || idle::<M>(),
    );
    // The driver stays until the echo process (its client) has gone.
    session.finish_echo();
    drop(raw);
    rt
}

pub(super) fn raw_echo<M: AeronMedium>(session: &str) {
    let t = echo_transport::<M>(session);
    let raw = Raw::open(&t, "ping", "echo");
    let mut frame = [0u8; FRAME];
    echo_loop::<M>(|frame| raw.poll(frame), |frame| raw.send(frame), &mut frame);
}

/// One idle step of `M`; never a frame.
fn idle<M: AeronMedium>() -> bool {
    M::idle();
    false
}

/// Sends every frame back until [`STOP`] or [`PATIENCE`] of silence.
fn echo_loop<M: AeronMedium>(
    mut poll: impl FnMut(&mut [u8; FRAME]) -> bool,
    mut send: impl FnMut(&[u8; FRAME]) -> bool,
    frame: &mut [u8; FRAME],
) {
    let mut quiet_since = Instant::now();
    while quiet_since.elapsed() < PATIENCE {
        if !poll(frame) {
            M::idle();
            continue;
        }
        if frame[FLAG] == STOP {
            return;
        }
        while !send(frame) {
            assert!(quiet_since.elapsed() < PATIENCE, "the ping stopped reading");
            M::idle();
        }
        quiet_since = Instant::now();
    }
}

fn link_send(tx: &mut AeronLinkTx, frame: &[u8]) -> bool {
    match tx.send_frame(frame.len(), &mut |b| b.copy_from_slice(frame)) {
        Ok(()) => true,
        Err(LinkError::Full) => false,
        Err(e) => panic!("link send: {e}"),
    }
}

fn link_poll(rx: &mut AeronLinkRx, back: &mut [u8; FRAME]) -> bool {
    rx.poll(1, &mut |f| back.copy_from_slice(f))
        .expect("link poll")
        == 1
}

pub(super) fn link_ping<M: AeronMedium>(session: &Session, plan: Plan) -> Vec<u64> {
    let (t, env) = ping_transport::<M>(session.name());
    let mut rx = t.listen("ping").expect("listen");
    session.spawn_echo(&env);
    let mut tx = t.connect("echo", PATIENCE).expect("connect");
    let rt = measure(
        plan,
        |frame| {
            while !link_send(&mut tx, frame) {
                M::idle();
            }
        },
        |back| link_poll(&mut rx, back) || idle::<M>(),
    );
    session.finish_echo();
    rt
}

pub(super) fn link_echo<M: AeronMedium>(session: &str) {
    let t = echo_transport::<M>(session);
    let mut rx = t.listen("echo").expect("listen");
    let mut tx = t.connect("ping", PATIENCE).expect("connect");
    let mut frame = [0u8; FRAME];
    echo_loop::<M>(
        |frame| link_poll(&mut rx, frame),
        |frame| link_send(&mut tx, frame),
        &mut frame,
    );
}
