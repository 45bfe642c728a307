//! Instances: names given at spawn, shown wherever an actor is named, and
//! actors spawned by a handler through `Ctx` into its own system.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::{AskError, DeadLetter, DeadLetterReason, Simulation, Solo, Terminated, Time};

const WAIT: Duration = Duration::from_secs(20);

pub struct Tick;
pub struct Fail;
pub struct ThreadName;
pub struct AskMyself;

#[actor]
pub struct Strategy {
    ticks: u64,
}

#[actor]
impl Strategy {
    #[handler(Tick)]
    fn tick(&mut self, _msg: Tick, _ctx: &mut Ctx<Self>) -> u64 {
        self.ticks += 1;
        self.ticks
    }

    #[handler(Fail)]
    fn fail(&mut self, _msg: Fail, _ctx: &mut Ctx<Self>) {
        panic!("strategy failed");
    }

    #[handler(ThreadName)]
    fn thread_name(&mut self, _msg: ThreadName, _ctx: &mut Ctx<Self>) -> String {
        std::thread::current().name().unwrap_or("?").to_string()
    }

    /// Waits on its own `ask`: refused at once as a deadlock, whose one
    /// edge names what it waits for.
    #[handler(AskMyself)]
    fn ask_myself(&mut self, _msg: AskMyself, ctx: &mut Ctx<Self>) -> String {
        match ctx.myself().ask(Tick).unwrap().wait() {
            Err(AskError::Deadlock(cycle)) => cycle[0].waits_for.to_string(),
            other => format!("not a deadlock: {other:?}"),
        }
    }
}

fn strategy() -> Strategy {
    Strategy { ticks: 0 }
}

/// Forwards what it watches and the dead letters it is subscribed to.
#[actor]
pub struct Observer {
    terminated: Sender<Terminated>,
    letters: Sender<DeadLetter>,
}

#[actor]
impl Observer {
    #[handler(Terminated)]
    fn terminated(&mut self, msg: Terminated, _ctx: &mut Ctx<Self>) {
        self.terminated.send(msg).unwrap();
    }

    #[handler(DeadLetter)]
    fn letter(&mut self, msg: DeadLetter, _ctx: &mut Ctx<Self>) {
        self.letters.send(msg).unwrap();
    }
}

/// An observer in a system of its own, so it outlives the observed one.
fn observer() -> (
    System,
    Addr<Observer>,
    Receiver<Terminated>,
    Receiver<DeadLetter>,
) {
    let system = System::new();
    let (terminated, t_rx) = channel();
    let (letters, l_rx) = channel();
    let addr = system
        .spawn(Observer {
            terminated,
            letters,
        })
        .start();
    (system, addr, t_rx, l_rx)
}

fn id(addr: &Addr<Strategy>) -> u64 {
    addr.id().get()
}

#[test]
fn two_instances_of_one_type_are_told_apart_by_their_names() {
    let system = System::new();
    let momentum = system.spawn(strategy()).name("momentum").start();
    let carry = system.spawn(strategy()).name(String::from("carry")).start();
    let plain = system.spawn(strategy()).start();

    assert_eq!(
        format!("{momentum:?}"),
        format!("Addr(momentum(Strategy#{}))", id(&momentum))
    );
    assert_eq!(
        format!("{carry:?}"),
        format!("Addr(carry(Strategy#{}))", id(&carry))
    );
    assert_eq!(
        format!("{plain:?}"),
        format!("Addr(Strategy#{})", id(&plain)),
        "an unnamed actor is shown as before"
    );
    assert_eq!(momentum.name(), "Strategy", "`name` is still the type name");
    assert_eq!(momentum.target().instance.as_deref(), Some("momentum"));
    assert_eq!(plain.target().instance, None);

    momentum.fast_send(Tick).unwrap();
    momentum.fast_send(Tick).unwrap();
    carry.fast_send(Tick).unwrap();
    let (m, c, p) = (momentum.stats(), carry.stats(), plain.stats());
    assert_eq!((m.name.as_deref(), m.handled), (Some("momentum"), 2));
    assert_eq!((c.name.as_deref(), c.handled), (Some("carry"), 1));
    assert_eq!((p.name, p.handled), (None, 0));
    system.shutdown();
}

#[test]
fn a_stopped_instance_is_named_in_the_error_and_its_termination() {
    let (_os, observer, terminated, _) = observer();
    let system = System::new();
    let momentum = system.spawn(strategy()).name("momentum").start();
    let plain = system.spawn(strategy()).start();
    momentum.watch(&observer);
    plain.watch(&observer);
    momentum.stop();
    plain.stop();
    let mut stopped: Vec<String> = (0..2)
        .map(|_| terminated.recv_timeout(WAIT).unwrap().target.to_string())
        .collect();
    stopped.sort();
    let mut want = vec![
        format!("momentum(Strategy#{})", id(&momentum)),
        format!("Strategy#{}", id(&plain)),
    ];
    want.sort();
    assert_eq!(stopped, want);

    let err = momentum.fast_send(Tick).unwrap_err();
    assert!(err.is_closed());
    assert_eq!(
        err.to_string(),
        format!(
            "momentum(Strategy#{}) has stopped; message handed back",
            id(&momentum)
        )
    );
    assert_eq!(
        kaspar::Error::from(err).to_string(),
        format!("momentum(Strategy#{}) has stopped", id(&momentum))
    );
    assert_eq!(
        plain.fast_send(Tick).unwrap_err().to_string(),
        format!("Strategy#{} has stopped; message handed back", id(&plain))
    );
    system.shutdown();
}

#[test]
fn a_dead_letter_names_the_instance_it_was_for() {
    let (_os, observer, _, letters) = observer();
    let system = System::new();
    system.dead_letters().subscribe(&observer);
    let momentum = system.spawn(strategy()).name("momentum").start();
    assert!(momentum.fast_send(Fail).unwrap_err().is_panicked());
    let letter = letters.recv_timeout(WAIT).unwrap();
    assert_eq!(letter.reason, DeadLetterReason::Panicked);
    assert_eq!(letter.target, momentum.target());
    assert_eq!(letter.target.instance.as_deref(), Some("momentum"));
    assert!(
        format!("{letter:?}").contains(&format!("momentum(Strategy#{})", id(&momentum))),
        "{letter:?}"
    );
    system.shutdown();
}

#[test]
fn the_thread_the_report_and_a_deadlock_name_the_instance() {
    let system = System::new();
    let momentum = system.spawn(strategy()).name("momentum").start();
    let plain = system.spawn(strategy()).start();
    let ask = |a: &Addr<Strategy>| a.ask(ThreadName).unwrap().wait().unwrap();
    assert_eq!(ask(&momentum), "kaspar:momentum");
    assert_eq!(ask(&plain), format!("kaspar:Strategy#{}", id(&plain)));

    let waits_for = momentum.ask(AskMyself).unwrap().wait().unwrap();
    assert_eq!(waits_for, format!("momentum(Strategy#{})", id(&momentum)));

    let report = system.shutdown();
    assert_eq!(report.stopped, vec![plain.target(), momentum.target()]);
    assert_eq!(report.stopped[1].instance.as_deref(), Some("momentum"));
}

#[test]
fn a_named_groups_members_and_thread_carry_its_name() {
    let system = System::new();
    let a = system
        .spawn_group::<Solo<Strategy>>((strategy(),))
        .name("book-a")
        .start();
    let b = system.spawn_group::<Solo<Strategy>>((strategy(),)).start();
    assert_eq!(
        a.actor.target().to_string(),
        format!("book-a(Strategy#{})", id(&a.actor))
    );
    assert_eq!(b.actor.target().instance, None);
    assert_eq!(
        a.actor.ask(ThreadName).unwrap().wait().unwrap(),
        "kaspar:book-a"
    );
    assert_eq!(
        b.actor.ask(ThreadName).unwrap().wait().unwrap(),
        "kaspar:group:Strategy",
        "an unnamed group's thread is named by its type (a Solo's is its actor's)"
    );
    let report = system.shutdown();
    let names: Vec<_> = report
        .stopped
        .iter()
        .map(|t| (t.name, t.instance.as_deref()))
        .collect();
    assert_eq!(
        names,
        vec![("Strategy", None), ("Strategy", Some("book-a"))]
    );
}

#[test]
#[should_panic(expected = "kaspar: an actor's name cannot be empty")]
fn an_empty_name_is_refused() {
    let system = System::new();
    let _ = system.spawn(strategy()).name("");
}

#[test]
#[should_panic(expected = "cannot hold a NUL character")]
fn a_name_no_thread_can_have_is_refused() {
    let system = System::new();
    let _ = system.spawn(strategy()).name("a\0b");
}

// --- Spawning from a handler ---------------------------------------------

pub struct Square(pub u64);
pub struct Hire(pub u64);
pub struct Hired;
pub struct TryHire;

/// Records its hooks on a channel.
#[actor]
pub struct Worker {
    log: Sender<String>,
}

#[actor]
impl Worker {
    #[started]
    fn started(&mut self, ctx: &mut Ctx<Self>) {
        self.log
            .send(format!("started {}", ctx.myself().target()))
            .unwrap();
    }

    #[handler(Square)]
    fn square(&mut self, msg: Square, _ctx: &mut Ctx<Self>) -> u64 {
        msg.0 * msg.0
    }

    #[stopped]
    fn stopped(&mut self, ctx: &mut Ctx<Self>) {
        self.log
            .send(format!("stopped {}", ctx.myself().target()))
            .unwrap();
    }
}

/// Spawns workers from its handlers, and one more as it stops.
#[actor]
pub struct Desk {
    log: Sender<String>,
    workers: Vec<Addr<Worker>>,
}

impl Desk {
    /// Spawns a worker named `name`, and reports whether it took a message.
    fn hire(&mut self, name: String, ctx: &mut Ctx<Self>) -> Result<Addr<Worker>, String> {
        let worker = ctx
            .spawn(Worker {
                log: self.log.clone(),
            })
            .name(name)
            .start();
        match worker.send(Square(1)) {
            Ok(()) => Ok(worker),
            Err(e) => Err(e.to_string()),
        }
    }
}

#[actor]
impl Desk {
    #[handler(Hire)]
    fn hire_one(&mut self, msg: Hire, ctx: &mut Ctx<Self>) -> u64 {
        let worker = self
            .hire(format!("worker-{}", msg.0), ctx)
            .expect("the system is running");
        // Asked from this handler, answered on the worker's own thread.
        let squared = worker.ask(Square(msg.0)).unwrap().wait().unwrap();
        self.workers.push(worker);
        squared
    }

    #[handler(Hired)]
    fn hired(&mut self, _msg: Hired, _ctx: &mut Ctx<Self>) -> Vec<Addr<Worker>> {
        self.workers.clone()
    }

    #[handler(TryHire)]
    fn try_hire(&mut self, _msg: TryHire, ctx: &mut Ctx<Self>) -> Option<String> {
        self.hire("outside".into(), ctx).err()
    }

    #[stopped]
    fn stopped(&mut self, ctx: &mut Ctx<Self>) {
        let refused = self.hire("late".into(), ctx).err();
        self.log
            .send(format!("desk stopped; late worker: {refused:?}"))
            .unwrap();
    }
}

fn drain(log: &Receiver<String>, n: usize) -> Vec<String> {
    (0..n).map(|_| log.recv_timeout(WAIT).unwrap()).collect()
}

#[test]
fn a_handler_spawns_a_child_into_its_system_and_shutdown_stops_it() {
    let (log, lines) = channel();
    let system = System::new();
    let desk = system
        .spawn(Desk {
            log,
            workers: Vec::new(),
        })
        .name("desk")
        .start();
    assert_eq!(desk.ask(Hire(7)).unwrap().wait().unwrap(), 49);
    let workers = desk.ask(Hired).unwrap().wait().unwrap();
    assert_eq!(workers.len(), 1);
    let worker = workers[0].clone();
    assert_eq!(worker.target().instance.as_deref(), Some("worker-7"));
    assert_eq!(worker.fast_send(Square(3)).unwrap(), 9);
    assert_eq!(
        drain(&lines, 1),
        vec![format!("started worker-7(Worker#{})", worker.id().get())]
    );

    let report = system.shutdown();
    // The worker is newer than the desk, so it stops first; the desk's
    // `stopped` hook then spawns one more into the closing system, which
    // starts closed, runs its hooks on its own thread (so in no order with
    // the desk's), and is stopped by the same shutdown.
    let mut late = drain(&lines, 4);
    assert_eq!(
        late.remove(0),
        format!("stopped worker-7(Worker#{})", worker.id().get())
    );
    late.sort();
    // The refusal names the worker it was for.
    assert!(
        late[0].starts_with("desk stopped; late worker: Some(\"late(Worker#")
            && late[0].ends_with(") has stopped; message handed back\")"),
        "{late:?}"
    );
    assert!(late[1].starts_with("started late(Worker#"), "{late:?}");
    assert!(late[2].starts_with("stopped late(Worker#"), "{late:?}");
    let stopped: Vec<_> = report
        .stopped
        .iter()
        .map(|t| (t.name, t.instance.as_deref().unwrap()))
        .collect();
    assert_eq!(
        stopped,
        vec![("Worker", "worker-7"), ("Desk", "desk"), ("Worker", "late")]
    );
    assert!(worker.is_stopped());
}

#[test]
fn a_handler_outside_any_system_spawns_a_closed_actor() {
    let (log, lines) = channel();
    let mut sim = Simulation::<Solo<Desk>>::new((Desk {
        log,
        workers: Vec::new(),
    },));
    let desk = sim.group().actor.clone();
    sim.deliver(Time::from_nanos(1), &desk, TryHire).unwrap();
    let refused = desk.fast_send(TryHire).unwrap().unwrap_or_default();
    assert!(
        refused.starts_with("outside(Worker#")
            && refused.ends_with(") has stopped; message handed back"),
        "{refused}"
    );
    // Both closed workers ran their hooks, on threads nothing waits for.
    let mut hooks = drain(&lines, 4);
    hooks.sort();
    assert!(hooks[0].starts_with("started outside(Worker#"), "{hooks:?}");
    assert!(hooks[2].starts_with("stopped outside(Worker#"), "{hooks:?}");
    sim.finish();
}

pub struct Found;

/// Spawns a named group of one from its handler.
#[actor]
pub struct Founder {
    log: Sender<String>,
}

#[actor]
impl Founder {
    #[handler(Found)]
    fn found(&mut self, _msg: Found, ctx: &mut Ctx<Self>) -> Addr<Worker> {
        let crew = ctx
            .spawn_group::<Solo<Worker>>((Worker {
                log: self.log.clone(),
            },))
            .name("crew")
            .start();
        crew.actor
    }
}

#[test]
fn a_handler_spawns_a_named_group_into_its_system() {
    let (log, lines) = channel();
    let system = System::new();
    let founder = system.spawn(Founder { log }).start();
    let member = founder.ask(Found).unwrap().wait().unwrap();
    assert_eq!(member.fast_send(Square(4)).unwrap(), 16);
    assert_eq!(
        drain(&lines, 1),
        vec![format!("started crew(Worker#{})", member.id().get())]
    );
    let report = system.shutdown();
    let stopped: Vec<_> = report
        .stopped
        .iter()
        .map(|t| (t.name, t.instance.as_deref()))
        .collect();
    assert_eq!(
        stopped,
        vec![("Worker", Some("crew")), ("Founder", None)],
        "the group, newer, stops first"
    );
    assert!(member.is_stopped());
}

/// The names a shutdown report gives, newest first.
fn reported(report: &kaspar::ShutdownReport) -> Vec<(&'static str, Option<String>)> {
    report
        .stopped
        .iter()
        .map(|t| (t.name, t.instance.as_deref().map(str::to_owned)))
        .collect()
}

#[test]
fn a_prepared_actor_named_before_it_starts_carries_the_name_everywhere() {
    let system = System::new();
    let prepared = system.prepare::<Strategy>().name("momentum");
    let addr = prepared.addr();
    let id = addr.id();
    // Named from the start: even the refusal before it starts.
    let refused = addr.fast_send(Tick).unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!("momentum(Strategy{id:?}) is prepared but not started; message handed back")
    );
    let started = prepared.spawn(strategy()).start();
    assert_eq!(started, addr);
    assert_eq!(addr.stats().name.as_deref(), Some("momentum"));
    assert_eq!(
        format!("{addr:?}"),
        format!("Addr(momentum(Strategy{id:?}))")
    );
    assert_eq!(
        addr.ask(ThreadName).unwrap().wait().unwrap(),
        "kaspar:momentum"
    );
    assert_eq!(
        reported(&system.shutdown()),
        vec![("Strategy", Some("momentum".to_owned()))]
    );
}

#[test]
fn a_prepared_actor_can_be_named_on_its_spawn_until_it_starts() {
    let system = System::new();
    let prepared = system.prepare::<Strategy>();
    let addr = prepared.addr();
    // It used to panic: "`name` cannot change for the prepared actor".
    let started = prepared.spawn(strategy()).name("late").start();
    assert_eq!(started.target().instance.as_deref(), Some("late"));
    assert_eq!(addr.target().instance.as_deref(), Some("late"));
    assert_eq!(addr.ask(ThreadName).unwrap().wait().unwrap(), "kaspar:late");
    assert_eq!(
        reported(&system.shutdown()),
        vec![("Strategy", Some("late".to_owned()))]
    );
}

#[test]
#[should_panic(expected = "the prepared actor Strategy is named \"first\" already")]
fn a_prepared_actor_is_given_one_name() {
    let system = System::new();
    let prepared = system.prepare::<Strategy>().name("first");
    let _ = prepared.spawn(strategy()).name("second");
}

#[test]
fn a_prepared_group_can_be_named_until_it_starts() {
    let system = System::new();
    // Named while prepared...
    let prepared = system.prepare_group::<Solo<Strategy>>().name("desk-a");
    let a = prepared.group().actor;
    let a_id = a.id();
    assert_eq!(
        a.fast_send(Tick).unwrap_err().to_string(),
        format!("desk-a(Strategy{a_id:?}) is prepared but not started; message handed back")
    );
    let a = prepared.spawn((strategy(),)).start().actor;
    // ...or on its spawn: it used to panic, "`name` cannot change for the
    // prepared group".
    let b = system
        .prepare_group::<Solo<Strategy>>()
        .spawn((strategy(),))
        .name("desk-b")
        .start()
        .actor;
    assert_eq!(a.target().instance.as_deref(), Some("desk-a"));
    assert_eq!(b.target().instance.as_deref(), Some("desk-b"));
    assert_eq!(a.ask(ThreadName).unwrap().wait().unwrap(), "kaspar:desk-a");
    assert_eq!(b.ask(ThreadName).unwrap().wait().unwrap(), "kaspar:desk-b");
    assert_eq!(
        reported(&system.shutdown()),
        vec![
            ("Strategy", Some("desk-b".to_owned())),
            ("Strategy", Some("desk-a".to_owned()))
        ]
    );
}

#[test]
#[should_panic(expected = "is named \"first\" already; a group is given one name")]
fn a_prepared_group_is_given_one_name() {
    let system = System::new();
    let prepared = system.prepare_group::<Solo<Strategy>>().name("first");
    let _ = prepared.spawn((strategy(),)).name("second");
}
