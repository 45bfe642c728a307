//! What the authentication tests share: the counter they attack, the
//! loopback tap that records and counts, hand-made frames, and the world
//! of a server, a client and a raw link.
#![allow(dead_code)]

#[path = "../forge/mod.rs"]
mod forge;
// Not every binary that includes this module uses all of them.
#[allow(unused_imports)]
pub(crate) use forge::{forge, hello_counter, push, Hello};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar_remote::frame::Kind;
use kaspar_remote::link::Announcement;
use kaspar_remote::loopback::{Loopback, LoopbackRx, LoopbackTx};
use kaspar_remote::{
    Auth, LinkError, LinkRx, LinkTx, Node, NodeConfig, PeerState, RemoteActor, RemoteAddr,
    Transport,
};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Clone, Debug, PartialEq)]
#[wire(id = 1)]
pub struct Seq(pub u64);

/// Logs the numbers it is sent; answers twice the number.
#[actor]
pub struct Counter {
    pub(crate) log: Arc<Mutex<Vec<u64>>>,
}

impl Counter {
    pub(crate) fn new() -> (Counter, Arc<Mutex<Vec<u64>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        (Counter { log: log.clone() }, log)
    }
}

#[actor(remote)]
impl Counter {
    #[handler(Seq)]
    pub(crate) fn on_seq(&mut self, s: Seq, _ctx: &mut Ctx<Self>) -> u64 {
        self.log.lock().unwrap().push(s.0);
        s.0 * 2
    }
}

/// Keeps the replies it is sent.
#[actor]
pub struct Replies {
    pub(crate) got: Arc<Mutex<Vec<u64>>>,
}

#[actor]
impl Replies {
    #[handler(u64)]
    pub(crate) fn on_reply(&mut self, r: u64, _ctx: &mut Ctx<Self>) {
        self.got.lock().unwrap().push(r);
    }
}

/// Polls `done` every millisecond for at most `limit`.
pub(crate) fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    done()
}

pub(crate) const KEY: &[u8] = b"a shared key of 32 bytes, secret";
pub(crate) const WRONG: &[u8] = b"not the key, though just as long";

pub(crate) fn config(auth: Option<Auth>) -> NodeConfig {
    NodeConfig {
        auth,
        connect_timeout: Duration::from_millis(500),
        ..NodeConfig::default()
    }
}

pub(crate) fn keyed(id: &str, key: &[u8]) -> NodeConfig {
    config(Some(Auth::new(id, key).unwrap()))
}

/// The loopback, recording every frame sent to the endpoint "server" and
/// counting the connects it is asked for.
#[derive(Clone)]
pub(crate) struct Tap {
    pub(crate) net: Loopback,
    pub(crate) to_server: Arc<Mutex<Vec<Vec<u8>>>>,
    pub(crate) connects: Arc<AtomicUsize>,
}

pub(crate) struct TapTx {
    pub(crate) inner: LoopbackTx,
    pub(crate) log: Option<Arc<Mutex<Vec<Vec<u8>>>>>,
}

impl LinkTx for TapTx {
    fn send_frame(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> Result<(), LinkError> {
        let log = self.log.clone();
        self.inner.send_frame(len, &mut |buf| {
            fill(buf);
            if let Some(log) = &log {
                log.lock().unwrap().push(buf.to_vec());
            }
        })
    }
    fn max_frame_len(&self) -> usize {
        self.inner.max_frame_len()
    }
    fn peer(&self) -> PeerState {
        self.inner.peer()
    }
}

impl Tap {
    pub(crate) fn new(capacity: usize) -> Tap {
        Tap {
            net: Loopback::new(capacity),
            to_server: Arc::default(),
            connects: Arc::default(),
        }
    }

    pub(crate) fn captured(&self) -> Vec<Vec<u8>> {
        self.to_server.lock().unwrap().clone()
    }
}

impl Transport for Tap {
    type Tx = TapTx;
    type Rx = LoopbackRx;
    fn listen(&self, endpoint: &str) -> Result<LoopbackRx, LinkError> {
        self.net.listen(endpoint)
    }
    fn connect(&self, endpoint: &str, timeout: Duration) -> Result<TapTx, LinkError> {
        self.connects.fetch_add(1, Ordering::SeqCst);
        Ok(TapTx {
            inner: self.net.connect(endpoint, timeout)?,
            log: (endpoint == "server").then(|| self.to_server.clone()),
        })
    }
    fn announce(&self, name: &str, record: &[u8]) -> Result<Announcement, LinkError> {
        self.net.announce(name, record)
    }
    fn discover(&self, name: &str) -> Result<Option<Vec<u8>>, LinkError> {
        self.net.discover(name)
    }
    fn liveness_timeout(&self) -> Duration {
        self.net.liveness_timeout()
    }
}

/// A hello's authentication, after its body (postcard, the crate's
/// field order).
#[derive(Serialize)]
pub(crate) struct HelloAuth<'a> {
    pub(crate) key_id: &'a str,
    pub(crate) nonce: [u8; 16],
    pub(crate) sign: bool,
    pub(crate) mac: [u8; 32],
}

pub(crate) fn hello(from: &str) -> Hello<'_> {
    hello_counter(from, Counter::SCHEMA_HASH)
}

/// A hello naming `from`, with an authentication whose MAC is a guess.
pub(crate) fn forged_hello(from: &str, session: u64) -> Vec<u8> {
    let a = HelloAuth {
        key_id: "client",
        nonce: [7; 16],
        sign: false,
        mac: [0x5a; 32],
    };
    forge(Kind::Hello, 0, 0, 1, session, 0, &(hello(from), a))
}

/// The frames `rx` receives within `patience`.
pub(crate) fn receive(rx: &mut impl LinkRx, patience: Duration) -> Vec<Vec<u8>> {
    forge::receive(rx, usize::MAX, patience)
}

/// A server exporting a `Counter` as "counter" (slot 0), a client that
/// looked it up, and a raw link into the server's inbox.
pub(crate) struct World {
    pub(crate) net: Tap,
    pub(crate) system: System,
    pub(crate) log: Arc<Mutex<Vec<u64>>>,
    pub(crate) server: Node<Tap>,
    pub(crate) client: Node<Tap>,
    pub(crate) remote: RemoteAddr<Counter>,
    pub(crate) raw: TapTx,
}

pub(crate) fn world(auth: bool) -> World {
    world_on(Tap::new(4096), auth)
}

pub(crate) fn world_on(net: Tap, auth: bool) -> World {
    let system = System::new();
    let (c, log) = Counter::new();
    let (sc, cc) = if auth {
        (keyed("server", KEY), keyed("client", KEY))
    } else {
        (config(None), config(None))
    };
    let server = Node::with_config(net.clone(), "server", sc).unwrap();
    server.export("counter", &system.spawn(c).start()).unwrap();
    let client = Node::with_config(net.clone(), "client", cc).unwrap();
    let remote = client.lookup::<Counter>("counter").unwrap();
    let raw = net.connect("server", Duration::from_secs(1)).unwrap();
    World {
        net,
        system,
        log,
        server,
        client,
        remote,
        raw,
    }
}

impl World {
    pub(crate) fn still_answers(&self, n: u64) {
        let got = self
            .remote
            .ask(Seq(n))
            .unwrap()
            .wait_timeout(Duration::from_secs(10));
        assert_eq!(got, Ok(n * 2), "the node stopped answering");
    }

    pub(crate) fn ran(&self, n: u64) -> bool {
        self.log.lock().unwrap().contains(&n)
    }

    pub(crate) fn finish(self) {
        drop(self.client);
        drop(self.server);
        self.system.shutdown();
    }
}
