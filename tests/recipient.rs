//! `Recipient<M, R>`: one handle for any actor that handles `M`, with every
//! delivery operation; `Addr::stop`; and `kaspar::Error`, which every
//! per-message error converts into.

use std::sync::{Arc, Mutex};

use kaspar::prelude::*;
use kaspar::{AskError, ExitReason, Terminated};

#[derive(Clone, Debug, PartialEq)]
pub struct Quote(pub i64);

/// Each strategy records the quotes it saw and answers with its name.
#[actor]
pub struct Momentum {
    seen: Arc<Mutex<Vec<(&'static str, i64)>>>,
}

#[actor]
impl Momentum {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> &'static str {
        self.seen.lock().unwrap().push(("momentum", q.0));
        "momentum"
    }
}

#[actor]
pub struct MeanRevert {
    seen: Arc<Mutex<Vec<(&'static str, i64)>>>,
}

#[actor]
impl MeanRevert {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> &'static str {
        self.seen.lock().unwrap().push(("mean-revert", q.0));
        "mean-revert"
    }
}

#[group]
pub struct Desk {
    pub momentum: Addr<Momentum>,
    pub mean_revert: Addr<MeanRevert>,
}

#[test]
fn one_recipient_list_reaches_actors_of_different_types_every_way() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let system = System::new();
    let m = system.spawn(Momentum { seen: seen.clone() }).start();
    let r = system.spawn(MeanRevert { seen: seen.clone() }).start();
    let desk = system
        .spawn_group::<Desk>((
            Momentum { seen: seen.clone() },
            MeanRevert { seen: seen.clone() },
        ))
        .start();
    let all: Vec<Recipient<Quote, &'static str>> = vec![
        m.recipient(),
        r.clone().into(),
        desk.momentum.recipient(),
        desk.mean_revert.recipient(),
    ];
    assert_eq!(all[1].id(), r.id());
    assert!(format!("{:?}", all[0]).contains("Momentum"));

    let names: Vec<_> = all.iter().map(|s| s.fast_send(Quote(1)).unwrap()).collect();
    assert_eq!(
        names,
        ["momentum", "mean-revert", "momentum", "mean-revert"]
    );
    for s in &all {
        assert_eq!(
            s.fast_send_x(Quote(2)).unwrap(),
            s.ask(Quote(3)).unwrap().wait().unwrap()
        );
        s.fast_send_spin(Quote(4)).unwrap();
        s.fast_send_adaptive(Quote(5)).unwrap();
        s.fast_send_with_policy(CyclePolicy::Conservative, Quote(6))
            .unwrap();
        assert_eq!(s.fast_send_void(Quote(7)).unwrap(), Delivered::Inline);
    }
    // Queued last: a queued message keeps its group's thread (and lock)
    // busy for a moment, which a `fast_send_x` or an inline
    // `fast_send_void` to the next member above would find `Busy`.
    for s in &all {
        s.send(Quote(8)).unwrap();
        // the ask queues behind the send: once answered, both were seen
        assert!(s.ask(Quote(9)).unwrap().wait().is_ok());
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), all.len() * 9);
    system.shutdown();
}

#[test]
fn a_recipient_hands_an_undelivered_message_back() {
    let system = System::new();
    let m = system
        .spawn(Momentum {
            seen: Arc::default(),
        })
        .start();
    let to: Recipient<Quote, &'static str> = m.recipient();
    m.stop();
    // stop is graceful but immediate for new messages
    assert_eq!(to.send(Quote(1)).unwrap_err().into_inner(), Quote(1));
    system.shutdown();
}

// ---- Addr::stop --------------------------------------------------------

pub struct Slow(pub std::sync::mpsc::Receiver<()>);
pub struct Count;

#[actor]
pub struct Stoppable {
    handled: u32,
    log: Arc<Mutex<Vec<String>>>,
}

#[actor]
impl Stoppable {
    #[handler(Slow)]
    fn slow(&mut self, msg: Slow, _ctx: &mut Ctx<Self>) {
        msg.0.recv().unwrap();
        self.handled += 1;
    }

    #[handler(Count)]
    fn count(&mut self, _msg: Count, _ctx: &mut Ctx<Self>) {
        self.handled += 1;
    }

    #[stopped]
    fn stopped(&mut self, _ctx: &mut Ctx<Self>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("stopped after {}", self.handled));
    }
}

#[actor]
pub struct Watcher {
    told: std::sync::mpsc::Sender<Terminated>,
}

#[actor]
impl Watcher {
    #[handler(Terminated)]
    fn terminated(&mut self, t: Terminated, _ctx: &mut Ctx<Self>) {
        self.told.send(t).unwrap();
    }
}

#[test]
fn stop_from_outside_handles_what_was_accepted_then_runs_the_hook() {
    let system = System::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let s = system
        .spawn(Stoppable {
            handled: 0,
            log: log.clone(),
        })
        .start();
    let (told_tx, told) = std::sync::mpsc::channel();
    let w = system.spawn(Watcher { told: told_tx }).start();
    s.watch(&w);
    let (open, gate) = std::sync::mpsc::channel();
    s.send(Slow(gate)).unwrap();
    for _ in 0..10 {
        s.send(Count).unwrap();
    }
    s.stop();
    assert!(s.send(Count).unwrap_err().is_closed(), "closed at once");
    open.send(()).unwrap();
    let t = told
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the watcher is told");
    assert_eq!(t.reason, ExitReason::Stopped);
    assert_eq!(t.target.id, s.id());
    assert_eq!(*log.lock().unwrap(), ["stopped after 11"]);
    assert!(s.is_stopped());
    system.shutdown();
}

// ---- kaspar::Error --------------------------------------------------------

pub struct Parse(pub &'static str);

#[actor]
pub struct Parser;

#[actor]
impl Parser {
    #[handler(Parse)]
    fn parse(&mut self, p: Parse, _ctx: &mut Ctx<Self>) -> Result<i64, std::num::ParseIntError> {
        p.0.parse()
    }

    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
        q.0
    }
}

fn total(p: &Addr<Parser>, text: &'static str) -> Result<i64, kaspar::Error> {
    let a = p.fast_send(Quote(1))?;
    p.send(Quote(2))?;
    let b = p.fast_send(Parse(text)).flatten_reply()?;
    let c = p.ask(Parse(text))?.wait().flatten_reply()?;
    Ok(a + b + c)
}

#[test]
fn every_per_message_error_and_a_handlers_own_error_compose_with_question_mark() {
    let system = System::new();
    let p = system.spawn(Parser).start();
    assert_eq!(total(&p, "20").unwrap(), 41);
    let e = total(&p, "x").unwrap_err();
    assert!(matches!(e, kaspar::Error::Failed(_)), "{e:?}");
    assert!(std::error::Error::source(&e).is_some());
    // into a boxed error, as anyhow-style code would
    let boxed: Box<dyn std::error::Error + Send + Sync> = e.into();
    assert!(boxed.to_string().contains("the handler failed"));
    p.stop();
    let e = total(&p, "1").unwrap_err();
    assert!(matches!(e, kaspar::Error::Closed(_)), "{e:?}");
    let timeout: kaspar::Error = AskError::Timeout(None).into();
    assert!(matches!(timeout, kaspar::Error::Timeout(None)));
    system.shutdown();
}

mod request {
    use kaspar::prelude::*;
    use kaspar::Recipient;

    pub struct Double(pub u64);
    pub struct Total;

    #[actor]
    pub struct Doubler;
    #[actor]
    impl Doubler {
        #[handler(Double)]
        fn double(&mut self, d: Double, _c: &mut Ctx<Self>) -> u64 {
            d.0 * 2
        }
    }

    #[actor]
    pub struct Sum {
        total: u64,
    }
    #[actor]
    impl Sum {
        #[handler(u64)]
        fn add(&mut self, n: u64, _c: &mut Ctx<Self>) {
            self.total += n;
        }
        #[handler(Total)]
        fn total(&mut self, _t: Total, _c: &mut Ctx<Self>) -> u64 {
            self.total
        }
    }

    #[test]
    fn a_request_through_a_recipient_replies_into_the_requesters_mailbox() {
        let system = System::new();
        let doubler: Recipient<Double, u64> = system.spawn(Doubler).start().recipient();
        let sum = system.spawn(Sum { total: 0 }).start();
        for n in 1..=10 {
            doubler.request(Double(n), &sum).unwrap();
        }
        // The doubler handles in order: once it has answered this ask, it
        // has pushed all ten replies into `sum`'s queue, ahead of the next
        // message from here.
        assert_eq!(doubler.ask(Double(0)).unwrap().wait().unwrap(), 0);
        let total = sum.ask(Total).unwrap().wait().unwrap();
        assert_eq!(total, 110);
        system.shutdown();
    }
}
