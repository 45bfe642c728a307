//! The kill test every transport runs (#27, row 6): a sender streams tells
//! to a `Counter` in another process, the process is killed (SIGKILL)
//! mid-stream, and the sender's report of the loss must add up exactly.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use kaspar::prelude::*;
use kaspar::{DeadLetter, DeadLetterReason, System};
use kaspar_remote::{LinkLoss, Node, NodeConfig, RemoteAddr, Retain, RetainedSend, Transport};

use crate::common::{Counter, Report, Seq};

/// Tells sent, and known handled, before the stream the kill cuts.
pub const WARM_UP: u64 = 5_000;
/// Messages the retain buffer holds: more than a liveness timeout's worth
/// of sends on these transports, so every unacknowledged one is held.
pub const RETAIN: usize = 1 << 22;

/// The dead letters collected: each retained `Seq`'s number and the peer
/// it names.
pub type Collected = Arc<Mutex<Vec<(u64, String)>>>;

/// Collects the system's dead letters: the number each retained `Seq`
/// carries, and the peer it names.
#[actor]
pub struct Letters {
    pub got: Collected,
}

#[actor]
impl Letters {
    #[handler(DeadLetter)]
    fn on_letter(&mut self, mut l: DeadLetter, _ctx: &mut Ctx<Self>) {
        assert_eq!(l.reason, DeadLetterReason::PeerLost);
        let sent = l
            .message
            .take()
            .and_then(|m| m.downcast::<RetainedSend>().ok())
            .expect("a retained send");
        let n = sent.decode::<Seq>().expect("a Seq").0;
        self.got.lock().unwrap().push((n, sent.peer().to_owned()));
    }
}

/// A node config that retains for `system`'s dead letters, which `Letters`
/// collects into the returned list.
pub fn retaining(system: &System, base: NodeConfig) -> (NodeConfig, Collected) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let letters = system.spawn(Letters { got: got.clone() }).start();
    system.dead_letters().subscribe(&letters);
    let config = NodeConfig {
        retain: Some(Retain::new(RETAIN, system.dead_letters())),
        ..base
    };
    (config, got)
}

/// Warms up (every tell handled and acknowledged, across processes),
/// streams tells from another thread, runs `kill` after `cut`, and checks
/// the loss report: `sent = acknowledged + unacknowledged`, exactly, with
/// `sent` counted here (the hello, the warm-up, its ask, and each `Ok`),
/// every unacknowledged message dead-lettered in order, the last one the
/// last sent. Returns the loss and the sends that returned `Ok` after the
/// kill.
pub fn stream_and_kill<T: Transport>(
    client: &Node<T>,
    remote: &RemoteAddr<Counter>,
    letters: &Collected,
    endpoint: &str,
    cut: Duration,
    kill: impl FnOnce(),
) -> (LinkLoss, u64) {
    let patience = Duration::from_secs(30);
    for i in 0..WARM_UP {
        send_until_taken(remote, i, patience).expect("the warm-up is sent");
    }
    let tally = remote.ask(Report).unwrap().wait_timeout(patience).unwrap();
    assert_eq!((tally.seen, tally.out_of_order), (WARM_UP, 0));
    // Acknowledged across processes: the ask's frame too, within ticks.
    let until = Instant::now() + patience;
    while remote.unacknowledged() > 0 {
        assert!(Instant::now() < until, "never acknowledged");
        thread::sleep(Duration::from_millis(1));
    }
    let sender = {
        let remote = remote.clone();
        thread::spawn(move || {
            let mut ok = 0u64;
            while let Some(()) = send_until_taken(&remote, WARM_UP + ok, patience) {
                ok += 1;
            }
            ok
        })
    };
    thread::sleep(cut);
    kill();
    let killed = Instant::now();
    let ok = sender.join().unwrap();
    let noticed = killed.elapsed();
    // (A send may see the loss before the bridge's tick reports it.)
    let until = Instant::now() + patience;
    while client.losses().is_empty() {
        assert!(Instant::now() < until, "the loss was never reported");
        thread::sleep(Duration::from_millis(1));
    }
    let losses = client.losses();
    assert_eq!(losses.len(), 1, "{losses:?}");
    let loss = losses[0].clone();
    assert_eq!(loss.peer, endpoint);
    // The hello, the warm-up, its ask, the stream.
    let sent = 1 + WARM_UP + 1 + ok;
    assert_eq!(loss.sent, sent, "{loss:?}");
    assert_eq!(loss.sent, loss.acknowledged + loss.unacknowledged);
    assert!(loss.acknowledged >= 2 + WARM_UP, "{loss:?}");
    assert_eq!(
        loss.unacknowledged, loss.dead_lettered,
        "all held: {loss:?}"
    );
    assert_eq!(loss.not_retained, 0);
    let stats = client.stats();
    assert_eq!(
        (stats.unacknowledged, stats.unacknowledged_dead_lettered),
        (loss.unacknowledged, loss.dead_lettered)
    );
    // Dead-lettered: exactly the messages after the last acknowledged one,
    // in order, each naming the lost peer.
    let until = Instant::now() + patience;
    while (letters.lock().unwrap().len() as u64) < loss.dead_lettered {
        assert!(Instant::now() < until, "the dead letters never came");
        thread::sleep(Duration::from_millis(1));
    }
    let got = letters.lock().unwrap().clone();
    let first = loss.acknowledged - 2; // the hello and the ask were frames
    assert!(
        got.iter().map(|g| g.0).eq(first..WARM_UP + ok),
        "{} letters from {:?} to {:?}, expected {first}..{}",
        got.len(),
        got.first(),
        got.last(),
        WARM_UP + ok
    );
    assert!(got.iter().all(|g| g.1 == endpoint));
    eprintln!(
        "loss seen {noticed:?} after the kill; {ok} sent in the stream, \
         {} acknowledged, {} unacknowledged (all dead-lettered)",
        loss.acknowledged, loss.unacknowledged
    );
    (loss, ok)
}

/// Sends `Seq(i)`, retrying while the receiver's buffer is full; `None`
/// once the link is lost.
fn send_until_taken(remote: &RemoteAddr<Counter>, i: u64, patience: Duration) -> Option<()> {
    let until = Instant::now() + patience;
    loop {
        match remote.send(Seq(i)) {
            Ok(()) => return Some(()),
            Err(SendError::Full { .. }) => {
                assert!(Instant::now() < until, "full for {patience:?}");
                thread::yield_now();
            }
            Err(_) => return None,
        }
    }
}
