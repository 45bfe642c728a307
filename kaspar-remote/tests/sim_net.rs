//! kaspar-remote under `kaspar::sim` (#28): nodes on a simulated network
//! (`transport::sim::SimNet`) whose frames are lost, doubled, late and
//! reordered, and whose peers die, all under the run's seed. What kaspar
//! promises must hold under all of it: at most once, every ask answered
//! or failed, `sent = acknowledged + unacknowledged` for a lost link,
//! `PeerLost` within the liveness timeout in virtual time; and a planted
//! bug (a reply lost when a remote peer dies mid-ask) is found.

mod sim_net_support;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::sim::{self, explore, Check, Sim, SimConfig, Strategy};
use kaspar::{AskError, Time};
use kaspar_remote::transport::sim::{NetFaults, SimNet};
use kaspar_remote::RemoteAddr;
use sim_net_support::proxy::{Answer, Connect, Forward, Proxy};
use sim_net_support::{config, two_nodes, until, Log, Note, Work, Worker, LIVENESS, TICK};

/// Past the liveness timeout, the loss is reported within one tick, plus
/// the steps other chains take first (1 µs of virtual time each).
const SLACK: Duration = Duration::from_millis(1);

/// What befalls the server in a run of the faults sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chaos {
    Nothing,
    Kill,
    /// Cut off from the client for half the liveness timeout: frames
    /// lost, the link not.
    ShortCut,
    /// Cut off for good: the link is lost after the liveness timeout.
    EndlessCut,
}

impl Chaos {
    const ALL: [Chaos; 4] = [
        Chaos::Nothing,
        Chaos::Kill,
        Chaos::ShortCut,
        Chaos::EndlessCut,
    ];

    /// Whether the client loses its link.
    fn loses(self) -> bool {
        matches!(self, Chaos::Kill | Chaos::EndlessCut)
    }
}

/// What the faults sweep counted over every seed.
#[derive(Default)]
struct Sweep {
    /// Runs per `Chaos`, in `Chaos::ALL`'s order.
    chaos: RefCell<[u64; 4]>,
    cut: Cell<u64>,
    duplicates_dropped: Cell<u64>,
    dropped: Cell<u64>,
    reordered: Cell<u64>,
    answered: Cell<u64>,
    failed: Cell<u64>,
    dead_lettered: Cell<u64>,
    /// The longest a loss took to be seen after the kill.
    slowest: Cell<Duration>,
}

/// One run of the faults sweep: a client looks the worker up (on a
/// faultless network), then the faults go on, two clients send tells and
/// asks, and at a time the seed picks the server dies, or is cut off
/// briefly or for good, or nothing happens (`Chaos`).
fn faults_body(sim: &mut Sim, sweep: &Sweep) {
    let net = SimNet::new(sim.clock(), NetFaults::none())
        .with_liveness(LIVENESS)
        .with_tick(TICK);
    let (server, client, log) = two_nodes(sim, &net);
    let remote: Rc<RefCell<Option<RemoteAddr<Worker>>>> = Rc::default();
    let ready = Rc::new(Cell::new(false));
    let sent: Rc<RefCell<Vec<u64>>> = Rc::default();
    let killed_at: Rc<Cell<Option<(Chaos, Time)>>> = Rc::default();
    let lost_at: Rc<Cell<Option<Time>>> = Rc::default();
    {
        let (client, remote, ready, net) =
            (client.clone(), remote.clone(), ready.clone(), net.clone());
        sim.client("lookup", async move {
            let found = client.lookup_async::<Worker>("work").await.expect("found");
            *remote.borrow_mut() = Some(found);
            net.set_faults(NetFaults::some());
            ready.set(true);
        });
    }
    let (answered, failed) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    for (c, base) in [("sender-a", 0u64), ("sender-b", 1_000)] {
        let (remote, ready, sent) = (remote.clone(), ready.clone(), sent.clone());
        let (answered, failed) = (answered.clone(), failed.clone());
        sim.client(c, async move {
            until(&ready).await;
            let remote = remote.borrow().clone().unwrap();
            for n in base..base + 12 {
                if sim::random().is_multiple_of(2) {
                    if remote.send(Note(n)).is_ok() {
                        sent.borrow_mut().push(n);
                    }
                    sim::yield_now().await;
                    continue;
                }
                let Ok(ask) = remote.ask(Work(n)) else {
                    continue;
                };
                sent.borrow_mut().push(n);
                match ask.await {
                    Ok(v) => {
                        assert_eq!(v, n * 2);
                        answered.set(answered.get() + 1);
                    }
                    Err(AskError::PeerLost) => failed.set(failed.get() + 1),
                    Err(e) => panic!("ask {n}: {e:?}"),
                }
            }
        });
    }
    {
        let (net, ready, killed_at, lost_at, client) = (
            net.clone(),
            ready.clone(),
            killed_at.clone(),
            lost_at.clone(),
            client.clone(),
        );
        sim.client("chaos", async move {
            until(&ready).await;
            let chaos = Chaos::ALL[(sim::random() % 4) as usize];
            sim::sleep(Duration::from_micros(sim::random() % 3_000)).await;
            killed_at.set(Some((chaos, sim::now())));
            match chaos {
                Chaos::Nothing => return,
                Chaos::Kill => drop(net.kill("server")),
                Chaos::ShortCut => net.partition("client", "server", Some(LIVENESS / 2)),
                Chaos::EndlessCut => net.partition("client", "server", None),
            }
            if !chaos.loses() {
                return;
            }
            while client.losses().is_empty() {
                sim::sleep(Duration::from_micros(10)).await;
            }
            lost_at.set(Some(sim::now()));
        });
    }
    let settled = sim.run();
    assert!(settled.stuck.is_empty(), "stuck: {:?}", settled.stuck);
    let (sent, log) = (sent.borrow().clone(), log.lock().unwrap().clone());
    // At most once, in order: what the worker handled is a subsequence
    // of what was sent, each number once.
    let mut rest = sent.iter();
    for n in &log {
        assert!(
            rest.any(|s| s == n),
            "{n} handled twice or out of order: sent {sent:?}, handled {log:?}"
        );
    }
    let losses = client.losses();
    let stats = client.stats();
    let s = server.stats();
    let chaos = killed_at.get().expect("the chaos client ran");
    sweep.chaos.borrow_mut()[chaos.0 as usize] += 1;
    match chaos {
        (c, _) if !c.loses() => {
            assert!(losses.is_empty(), "{c:?}: {losses:?}");
            assert_eq!(stats.peers_lost, 0);
        }
        (_, killed) => {
            assert_eq!((losses.len(), stats.peers_lost), (1, 1), "{losses:?}");
            let loss = &losses[0];
            assert_eq!(
                loss.sent,
                1 + sent.len() as u64,
                "the hello and every Ok send"
            );
            assert_eq!(loss.sent, loss.acknowledged + loss.unacknowledged);
            assert_eq!(loss.unacknowledged, loss.dead_lettered + loss.not_retained);
            // Every message is held (64 room, at most 24 sent); the hello
            // is no message, so it is the one not held when its ack too
            // was lost.
            let hello_unacknowledged = u64::from(loss.acknowledged == 0);
            assert_eq!(loss.not_retained, hello_unacknowledged, "{loss:?}");
            let letters = sim.system().dead_letters().counts().peer_lost;
            assert_eq!(letters, loss.dead_lettered);
            sweep.dead_lettered.set(sweep.dead_lettered.get() + letters);
            assert!(
                loss.acknowledged <= 1 + log.len() as u64 + s.refused + s.missed,
                "{loss:?}: {} handled, {s:?}",
                log.len()
            );
            let after = lost_at.get().unwrap().saturating_duration_since(killed);
            assert!(
                after >= LIVENESS,
                "lost after {after:?}, before the liveness timeout"
            );
            assert!(after <= LIVENESS + TICK + SLACK, "lost after {after:?}");
            sweep.slowest.set(sweep.slowest.get().max(after));
        }
    }
    sweep.answered.set(sweep.answered.get() + answered.get());
    sweep.failed.set(sweep.failed.get() + failed.get());
    let n = net.stats();
    sweep.dropped.set(sweep.dropped.get() + n.dropped);
    sweep.cut.set(sweep.cut.get() + n.cut);
    sweep.reordered.set(sweep.reordered.get() + n.reordered);
    sweep
        .duplicates_dropped
        .set(sweep.duplicates_dropped.get() + s.duplicates + stats.duplicates);
}

#[test]
fn faults_keep_at_most_once_and_account_for_every_send() {
    for strategy in [Strategy::Random, Strategy::PCT] {
        let sweep = Sweep::default();
        let passed = explore(&Check::seeds(0..300).strategy(strategy), |sim| {
            faults_body(sim, &sweep)
        })
        .unwrap_or_else(|f| panic!("{f}"));
        eprintln!(
            "{strategy:?}: {} seeds, {} runs (PCT measures each seed's horizon in a run first), {} steps; over the runs: nothing/killed/short cut/endless cut {:?}, frames cut {} (loss seen at most {:?} after, {} sends dead-lettered), asks answered {}, failed {}; frames dropped {}, reordered {}, duplicates refused {}",
            passed.seeds,
            sweep.chaos.borrow().iter().sum::<u64>(),
            passed.steps,
            sweep.chaos.borrow(),
            sweep.cut.get(),
            sweep.slowest.get(),
            sweep.dead_lettered.get(),
            sweep.answered.get(),
            sweep.failed.get(),
            sweep.dropped.get(),
            sweep.reordered.get(),
            sweep.duplicates_dropped.get()
        );
        // The sweep did meet what it is about.
        assert!(sweep.chaos.borrow().iter().all(|&n| n > 0));
        assert!(sweep.cut.get() > 0);
        assert!(sweep.dropped.get() > 0 && sweep.reordered.get() > 0);
        assert!(sweep.duplicates_dropped.get() > 0);
        assert!(sweep.answered.get() > 0 && sweep.failed.get() > 0);
        assert!(sweep.dead_lettered.get() > 0);
    }
}

#[test]
fn the_same_seed_gives_the_same_trace_with_network_faults_on() {
    for seed in [3, 8, 21] {
        let traces: Vec<String> = (0..2)
            .map(|_| {
                let mut sim = Sim::new(SimConfig::seed(seed));
                faults_body(&mut sim, &Sweep::default());
                sim.trace().to_string()
            })
            .collect();
        assert_eq!(traces[0], traces[1], "seed {seed}");
        // The network's steps are in it: frames delivered and ticks.
        assert!(
            traces[0].contains("client -> server: Tell"),
            "{}",
            traces[0]
        );
        assert!(traces[0].contains("tick"));
    }
    let other = |seed| {
        let mut sim = Sim::new(SimConfig::seed(seed));
        faults_body(&mut sim, &Sweep::default());
        sim.trace().to_string()
    };
    assert_ne!(other(3), other(4), "another seed, another run");
}

/// A front node whose proxy forwards three callers' requests to a worker
/// on a back node, which dies at a time the seed picks (up to 10 ms in,
/// while the callers take about 1 ms).
fn proxy_body(sim: &mut Sim, fixed: bool) {
    let net = SimNet::new(sim.clock(), NetFaults::none())
        .with_liveness(LIVENESS)
        .with_tick(TICK);
    let log = Arc::new(Mutex::new(Vec::new()));
    let back = net.node("back", config()).unwrap();
    let worker = sim.system().spawn(Worker { log }).start();
    back.export("work", &worker).unwrap();
    let front = Rc::new(net.node("front", config()).unwrap());
    for s in net.sources() {
        sim.source(s);
    }
    let proxy = sim.system().spawn(Proxy::new(fixed)).start();
    let ready = Rc::new(Cell::new(false));
    {
        let (front, proxy, ready) = (front.clone(), proxy.clone(), ready.clone());
        sim.client("lookup", async move {
            let remote = front.lookup_async::<Worker>("work").await.expect("found");
            proxy.send(Connect(remote)).unwrap();
            ready.set(true);
        });
    }
    for c in 0..3u64 {
        let (proxy, ready) = (proxy.clone(), ready.clone());
        sim.client(&format!("caller{c}"), async move {
            until(&ready).await;
            for n in 0..3 {
                let answer = Answer::default();
                proxy.send(Forward(c * 10 + n, answer.clone())).unwrap();
                match answer.await {
                    Ok(v) => assert_eq!(v, (c * 10 + n) * 2),
                    Err(e) => assert!(matches!(e, AskError::PeerLost), "{e:?}"),
                }
            }
        });
    }
    {
        let (net, ready) = (net.clone(), ready.clone());
        sim.client("chaos", async move {
            until(&ready).await;
            sim::sleep(Duration::from_micros(sim::random() % 10_000)).await;
            net.kill("back");
        });
    }
    let settled = sim.run();
    assert!(
        settled.stuck.is_empty(),
        "callers never answered: {:?}",
        settled.stuck
    );
    drop((back, front));
}

#[test]
fn a_reply_lost_when_the_peer_dies_mid_ask_is_found_and_replays() {
    let seeds = 0..200;
    for strategy in [Strategy::Random, Strategy::PCT] {
        let check = Check::seeds(seeds.clone()).strategy(strategy);
        let failure =
            explore(&check, |sim| proxy_body(sim, false)).expect_err("the planted bug is found");
        eprintln!(
            "{strategy:?}: the planted bug found on try {} (seed {}): {}; its last steps:\n{}",
            failure.tries,
            failure.seed,
            failure.message,
            failure.trace.tail(16)
        );
        assert!(
            failure.message.contains("callers never answered"),
            "{}",
            failure.message
        );
        // The failing seed replays, step for step.
        let again = Check::seeds(failure.seed..failure.seed + 1).strategy(strategy);
        let replay = explore(&again, |sim| proxy_body(sim, false)).expect_err("it fails again");
        assert_eq!(replay.trace.to_string(), failure.trace.to_string());
        assert!(failure.trace.to_string().contains("net:front"));
        // The fix passes every seed.
        let passed = explore(&check, |sim| proxy_body(sim, true)).unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(passed.seeds, 200);
    }
}

/// A node started on a dead node's endpoint is a new peer: the old link
/// stays lost (its ask fails with `PeerLost` a liveness timeout after the
/// death), a new lookup reaches the new node, and nothing meant for one
/// reaches the other.
#[test]
fn a_node_restarted_where_one_died_is_a_new_peer() {
    let passed = sim::check(Check::seeds(0..50).strategy(Strategy::PCT), |sim| {
        let net = SimNet::new(sim.clock(), NetFaults::none())
            .with_liveness(LIVENESS)
            .with_tick(TICK);
        let (first, client, old_log) = two_nodes(sim, &net);
        let new_log = Log::default();
        let second = sim
            .system()
            .spawn(Worker {
                log: new_log.clone(),
            })
            .start();
        let restarted = Rc::new(RefCell::new(None));
        {
            let (net, restarted) = (net.clone(), restarted.clone());
            sim.client("restart", async move {
                let old = client.lookup_async::<Worker>("work").await.unwrap();
                assert_eq!(old.ask(Work(1)).unwrap().await.unwrap(), 2);
                let killed = sim::now();
                net.kill("server");
                // A node on the same endpoint, exporting the same name.
                let node = net.node("server", config()).unwrap();
                node.export("work", &second).unwrap();
                *restarted.borrow_mut() = Some(node);
                let lost = old.ask(Work(2)).unwrap().await;
                assert!(matches!(lost, Err(AskError::PeerLost)), "{lost:?}");
                assert!(sim::now().saturating_duration_since(killed) >= LIVENESS);
                assert!(old.is_lost());
                let new = client.lookup_async::<Worker>("work").await.unwrap();
                assert_eq!(new.ask(Work(3)).unwrap().await.unwrap(), 6);
                assert_eq!(client.losses().len(), 1);
                assert_eq!(client.stats().peers_lost, 1);
            });
        }
        let settled = sim.run();
        assert!(settled.stuck.is_empty(), "{:?}", settled.stuck);
        assert_eq!(*old_log.lock().unwrap(), [1]);
        assert_eq!(*new_log.lock().unwrap(), [3]);
        drop((first, restarted));
    });
    assert_eq!(passed.seeds, 50);
}
