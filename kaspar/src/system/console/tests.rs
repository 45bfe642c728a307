//! The console's sampler and server, through `System::console_every` and
//! plain HTTP over a socket; the page itself is tested in a browser by the
//! root package's `tests/console_browser.rs`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::actor::addr::Addr;
use crate::system::System;

pub struct Ping;

#[crate::actor]
pub struct Front {
    back: Option<Addr<Back>>,
}

#[crate::actor]
impl Front {
    #[crate::handler(Addr<Back>)]
    fn wire(&mut self, back: Addr<Back>, _c: &mut crate::Ctx<Self>) {
        self.back = Some(back);
    }

    /// Passes each ping on: one synchronous delivery and one send.
    #[crate::handler(Ping)]
    fn ping(&mut self, _p: Ping, _c: &mut crate::Ctx<Self>) {
        let back = self.back.as_ref().expect("wired");
        back.fast_send(Ping).unwrap();
        back.send(Ping).unwrap();
    }
}

#[crate::actor]
pub struct Back;

#[crate::actor]
impl Back {
    #[crate::handler(Ping)]
    fn ping(&mut self, _p: Ping, _c: &mut crate::Ctx<Self>) {}
}

/// `GET path` on `console`, with `host` as the `Host` header: the status
/// line and the body.
fn get(addr: std::net::SocketAddr, path: &str, host: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").expect("a head");
    (head.lines().next().unwrap().to_string(), body.to_string())
}

#[test]
fn the_snapshot_counts_each_edge_once_however_the_message_came() {
    let system = System::new();
    let back = system.spawn(Back).name("back").start();
    let front = system.spawn(Front { back: None }).name("front").start();
    front.fast_send(back.clone()).unwrap();
    for _ in 0..3 {
        // From this thread (outside any handler) into `front`, which
        // passes each on twice.
        front.fast_send(Ping).unwrap();
    }
    // And one `ask`, from here too.
    back.ask(Ping).unwrap().wait().unwrap();
    while back.stats().handled < 7 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let console = system
        .console_every("127.0.0.1:0", Duration::from_millis(20))
        .unwrap();
    let (status, body) = get(console.local_addr(), "/api/snapshot", "localhost");
    assert_eq!(status, "HTTP/1.1 200 OK");
    let (f, b) = (front.id().get(), back.id().get());
    // Four messages into front from outside (the wiring and three pings),
    // six from front into back (three inline, three queued).
    assert!(
        body.contains(&format!(r#"{{"from":0,"to":{f},"count":4,"#)),
        "{body}"
    );
    assert!(
        body.contains(&format!(r#"{{"from":{f},"to":{b},"count":6,"#)),
        "{body}"
    );
    assert!(body.contains(r#""thread":"kaspar:front""#), "{body}");
    assert!(body.contains(r#""name":"back","group":null"#), "{body}");
    assert!(
        body.contains(&format!(r#"{{"from":0,"to":{b},"count":1,"#)),
        "{body}"
    );
    // Nothing else sent to anyone.
    assert_eq!(body.matches(r#""from":"#).count(), 3, "{body}");
    drop(console);
    system.shutdown();
}

#[crate::group]
pub struct Backs {
    pub one: Addr<Back>,
    pub two: Addr<Back>,
}

#[test]
fn a_pooled_actor_or_group_runs_on_the_pool() {
    let system = System::new();
    let alone = system.spawn(Back).name("alone").pooled().start();
    let pair = system
        .spawn_group::<Backs>((Back, Back))
        .name("pair")
        .pooled()
        .start();
    alone.ask(Ping).unwrap().wait().unwrap();
    pair.two.ask(Ping).unwrap().wait().unwrap();
    let console = system
        .console_every("127.0.0.1:0", Duration::from_millis(20))
        .unwrap();
    let (status, body) = get(console.local_addr(), "/api/snapshot", "localhost");
    assert_eq!(status, "HTTP/1.1 200 OK");
    // No thread of its own: whichever worker runs it, it is the pool's.
    assert!(
        body.contains(r#""name":"alone","group":null,"thread":"kaspar:pool""#),
        "{body}"
    );
    assert_eq!(
        body.matches(r#""group":"Backs","thread":"kaspar:pool""#)
            .count(),
        2,
        "{body}"
    );
    drop(console);
    system.shutdown();
}

#[test]
fn the_page_is_served_and_a_foreign_host_is_refused() {
    let system = System::new();
    let console = system.console("127.0.0.1:0").unwrap();
    let addr = console.local_addr();
    assert_eq!(console.url(), format!("http://{addr}/"));
    let (status, page) = get(addr, "/", &format!("127.0.0.1:{}", addr.port()));
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(page.contains("<title>kaspar console</title>"));
    assert!(get(addr, "/console.js", "localhost")
        .1
        .contains("/api/snapshot"));
    let (status, _) = get(addr, "/", "attacker.example");
    assert_eq!(status, "HTTP/1.1 403 Forbidden");
    let (status, _) = get(addr, "/nothing", "localhost");
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    drop(console);
    // Stopped: the port is closed.
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn a_zero_period_is_an_input_error() {
    let system = System::new();
    let err = system
        .console_every("127.0.0.1:0", Duration::ZERO)
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
fn the_page_shows_a_shutdown_and_the_sampler_stops_when_the_system_goes() {
    let system = System::new();
    let actor = system.spawn(Back).name("last").start();
    let mut console = system
        .console_every("127.0.0.1:0", Duration::from_millis(10))
        .unwrap();
    actor.send(Ping).unwrap();
    system.shutdown();
    let addr = console.local_addr();
    let shut_down =
        |body: &str| body.contains(r#""running":false"#) && body.contains(r#""stopped":true"#);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !shut_down(&get(addr, "/api/snapshot", "localhost").1) {
        assert!(
            std::time::Instant::now() < deadline,
            "no sample after the shutdown"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(actor);
    drop(system);
    // A watchdog turns a sampler that never exits into a failure.
    let sampler = console.sampler.take().expect("running");
    let (done, exited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        sampler.join().unwrap();
        done.send(()).unwrap();
    });
    exited
        .recv_timeout(Duration::from_secs(60))
        .expect("the sampler did not stop with its system");
    // The last sample is still served.
    let (status, body) = get(addr, "/api/snapshot", "localhost");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(shut_down(&body), "{body}");
}

#[crate::actor]
pub struct First {
    next: Option<Addr<Second>>,
}

#[crate::actor]
impl First {
    #[crate::handler(Addr<Second>)]
    fn wire(&mut self, next: Addr<Second>, _c: &mut crate::Ctx<Self>) {
        self.next = Some(next);
    }

    #[crate::handler(Ping)]
    fn ping(&mut self, _p: Ping, _c: &mut crate::Ctx<Self>) {
        self.next.as_ref().expect("wired").fast_send(Ping).unwrap();
    }
}

#[crate::actor]
pub struct Second {
    next: Option<Addr<Back>>,
}

#[crate::actor]
impl Second {
    #[crate::handler(Addr<Back>)]
    fn wire(&mut self, next: Addr<Back>, _c: &mut crate::Ctx<Self>) {
        self.next = Some(next);
    }

    #[crate::handler(Ping)]
    fn ping(&mut self, _p: Ping, _c: &mut crate::Ctx<Self>) {
        self.next.as_ref().expect("wired").fast_send(Ping).unwrap();
    }
}

#[crate::group]
pub struct Chain {
    pub first: Addr<First>,
    pub second: Addr<Second>,
    pub third: Addr<Back>,
}

#[test]
fn an_intra_group_chain_names_each_hop_s_own_sender() {
    let system = System::new();
    let chain = system
        .spawn_group::<Chain>((First { next: None }, Second { next: None }, Back))
        .name("chain")
        .start();
    chain.first.send(chain.second.clone()).unwrap();
    chain.second.send(chain.third.clone()).unwrap();
    // Queued: the group's thread runs `first`, whose handler enters
    // `second` and then `third` intra-group (no frame on the chain).
    for _ in 0..5 {
        chain.first.send(Ping).unwrap();
    }
    while chain.third.stats().handled < 5 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let console = system.console("127.0.0.1:0").unwrap();
    let body = get(console.local_addr(), "/api/snapshot", "localhost").1;
    let id = |a: u64| a.to_string();
    let (f, s, t) = (
        id(chain.first.id().get()),
        id(chain.second.id().get()),
        id(chain.third.id().get()),
    );
    assert!(
        body.contains(&format!(r#"{{"from":0,"to":{f},"count":6,"#)),
        "{body}"
    );
    assert!(
        body.contains(&format!(r#"{{"from":0,"to":{s},"count":1,"#)),
        "{body}"
    );
    assert!(
        body.contains(&format!(r#"{{"from":{f},"to":{s},"count":5,"#)),
        "{body}"
    );
    assert!(
        body.contains(&format!(r#"{{"from":{s},"to":{t},"count":5,"#)),
        "{body}"
    );
    assert_eq!(body.matches(r#""from":"#).count(), 4, "{body}");
    assert!(
        body.contains(r#""group":"Chain","thread":"kaspar:chain""#),
        "{body}"
    );
    drop(console);
    system.shutdown();
}

pub struct Again(u32);

#[crate::actor]
pub struct Looper;

#[crate::actor]
impl Looper {
    /// Calls itself with `fast_send_void`: a cycle, so the call falls back
    /// to its own queue, and is counted once, as a send.
    #[crate::handler(Again)]
    fn again(&mut self, n: Again, ctx: &mut crate::Ctx<Self>) {
        if n.0 > 0 {
            let queued = ctx.myself().fast_send_void(Again(n.0 - 1)).unwrap();
            assert_eq!(queued, crate::Delivered::Queued);
        }
    }
}

#[test]
fn a_fast_send_void_that_falls_back_to_the_queue_counts_once() {
    let system = System::new();
    let looper = system.spawn(Looper).start();
    looper.send(Again(4)).unwrap();
    while looper.stats().handled < 5 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let console = system.console("127.0.0.1:0").unwrap();
    let body = get(console.local_addr(), "/api/snapshot", "localhost").1;
    let l = looper.id().get();
    assert!(
        body.contains(&format!(r#"{{"from":0,"to":{l},"count":1,"#)),
        "{body}"
    );
    assert!(
        body.contains(&format!(r#"{{"from":{l},"to":{l},"count":4,"#)),
        "{body}"
    );
    drop(console);
    system.shutdown();
}
