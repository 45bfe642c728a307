//! A whole actor system under one seeded scheduler (feature `sim`).
//!
//! [`Sim`] builds a [`System`] whose every actor, whatever its placement
//! (its own thread, a group, the pool, `#[actor(thread_bound)]`), runs on
//! the calling thread, one step at a time, on virtual time. The user's
//! code does not change: the same actor types, the same `spawn` calls,
//! the same handlers. What the test does from outside (the "threads" of a
//! live test) are *clients*: tasks the simulator interleaves with the
//! actors, which send, `fast_send` and `ask(..).await` as any code does.
//!
//! A step is one of:
//!
//! * one message handled by one actor (or one group member): the pool's
//!   activation, run with a budget of one message;
//! * one run of a client, until it awaits something not yet there;
//! * one timer firing.
//!
//! Which ready step runs next is the seed's choice, by a [`Strategy`]
//! (uniform random, or PCT). Virtual time moves by
//! [`SimConfig::tick`] per step and jumps forward when nothing is ready
//! but a timer or a sleeping client. [`Faults`] inject handler panics,
//! full mailboxes and late timers at steps the seed chooses. A run records
//! a [`Trace`]: the same seed gives the same trace, byte for byte.
//!
//! [`check()`] runs a test body over a range of seeds, stops at the first
//! failure and prints its seed, its trace and how to replay it
//! (`KASPAR_SEED=<seed>`).
//!
//! # What is simulated, and what is not
//!
//! The order in which actors handle their messages and clients run, the
//! time handlers read through [`Ctx::now`](crate::Ctx::now), timers, and
//! the faults above. Not simulated: the races *inside* kaspar (a lock's
//! or a queue's atomics), which are loom's job (`tests/loom_*.rs`), and
//! anything a handler does behind kaspar's back (a thread of its own, the
//! wall clock, I/O).
//!
//! On the simulator's one thread a blocking wait could only wait for
//! itself, so every blocking wait is refused there, as on a tokio-hosted
//! pool: `ask(..).wait()` returns [`AskError::Deadlock`](crate::AskError::Deadlock),
//! a send that would wait for room in a full `WhenFull::Wait` mailbox
//! returns [`SendError::Deadlock`](crate::SendError::Deadlock) with the
//! message. Clients `.await` instead; a handler that needs an answer sends
//! its request with a reply route (`request`, or `tell` with `reply_to`),
//! which is also what keeps it from blocking its thread live.

mod check;
mod clients;
mod core;
mod faults;
mod pick;
mod rng;
mod trace;

use std::fmt;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

pub use self::check::{check, explore, Check, Failure, Passed};
pub use self::clients::{now, random, sleep, yield_now, Sleep, YieldNow};
pub use self::faults::Faults;
pub use self::pick::Strategy;
pub use self::trace::{Event, Trace, What};

use self::clients::Clients;
use self::core::Core;
use self::pick::{Chain, Picker};
use self::rng::Rng;
use crate::base::clock::{Clock, Time, VirtualClock};
use crate::base::ids::Target;
use crate::base::sim_watch::Watch;
use crate::delivery::sched::sim::{Host, Scope};
use crate::system::pool::SimHost;
use crate::system::{System, SystemConfig};

/// How a simulated run is set up.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SimConfig {
    /// Names the run: every choice the run makes follows from it.
    pub seed: u64,
    /// How the next step is chosen.
    pub strategy: Strategy,
    /// What goes wrong, and how often.
    pub faults: Faults,
    /// A run that has not settled after this many steps fails (a
    /// livelock, or a test that never stops sending).
    pub max_steps: u64,
    /// Virtual time per step.
    pub tick: Duration,
    /// Virtual time at the start.
    pub start: Time,
    /// Trace events kept (the newest); 0 keeps none.
    pub trace_limit: usize,
    /// The system's settings (cycle policy, default mailbox, batch size),
    /// as live. Its clock and pool are the simulator's.
    pub system: SystemConfig,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 0,
            strategy: Strategy::Random,
            faults: Faults::none(),
            max_steps: 1_000_000,
            tick: Duration::from_micros(1),
            start: Time::from_nanos(0),
            trace_limit: 1 << 16,
            system: SystemConfig::default(),
        }
    }
}

impl SimConfig {
    /// The default set-up with `seed`.
    pub fn seed(seed: u64) -> Self {
        SimConfig {
            seed,
            ..SimConfig::default()
        }
    }

    /// With `strategy`.
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// With `faults`.
    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }
}

/// A simulated actor system (see the [module docs](self)).
pub struct Sim {
    // Dropped last: the actors' cells, after the run has stopped them.
    system: System,
    host: Arc<Host>,
    core: Rc<Core>,
    clients: Clients,
    picker: Picker,
    rng: Rng,
    config: SimConfig,
    steps: u64,
    targets: Vec<Target>,
    woken: Vec<u32>,
    ready: Vec<Chain>,
    sources: Vec<(Arc<str>, Box<dyn Source>)>,
}

impl fmt::Debug for Sim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sim")
            .field("seed", &self.config.seed)
            .field("strategy", &self.config.strategy)
            .field("steps", &self.steps)
            .field("now", &self.now())
            .finish()
    }
}

/// Something besides actors, clients and timers that a simulated run
/// steps, as one more chain of ready steps: a simulated network between
/// nodes (kaspar-remote's simulated transport), say. Its steps run on the
/// simulator's thread inside the run, so [`random`] and [`now`] work in
/// them, and what they send to actors is scheduled as any send is.
pub trait Source {
    /// Its name, for the trace.
    fn name(&self) -> &str;
    /// Whether it has a step to run at virtual time `now`.
    fn ready(&mut self, now: Time) -> bool;
    /// Runs one step; returns what it did, for the trace.
    fn step(&mut self, now: Time) -> String;
    /// When it will next have a step if nothing else happens (a delayed
    /// frame's arrival); virtual time jumps there when nothing else is
    /// ready.
    fn next_due(&self) -> Option<Time>;
}

/// How a [`Sim::run`] ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled {
    /// Steps run so far in the run.
    pub steps: u64,
    /// Clients that have not finished: each waits for something that
    /// nothing ready will bring (a reply never sent, say).
    pub stuck: Vec<Arc<str>>,
}

impl Sim {
    /// A simulated system set up by `config`; nothing runs until
    /// [`run`](Self::run) or [`step`](Self::step).
    pub fn new(config: SimConfig) -> Self {
        check::quiet_injected_panics();
        let clock = VirtualClock::new(config.start);
        let host = Arc::new(Host::new());
        let mut system = config.system.clone();
        system.clock = Clock::Virtual(clock.clone());
        system.pool.sim = Some(SimHost(Arc::clone(&host)));
        let mut rng = Rng::new(config.seed);
        let picker = Picker::new(config.strategy, &mut rng);
        let core = Rc::new(Core {
            clock,
            trace: std::cell::RefCell::new(Trace::new(config.trace_limit)),
            faults: config.faults.clone(),
            fault_rng: std::cell::RefCell::new(Rng::split(config.seed, 1)),
            client_rng: std::cell::RefCell::new(Rng::split(config.seed, 2)),
            sleepers: Default::default(),
            step: std::cell::Cell::new(0),
            handled: std::cell::Cell::new(0),
            injected: std::cell::Cell::new(0),
            yielded: std::cell::Cell::new(false),
        });
        Sim {
            system: System::with_config(system),
            host,
            core,
            clients: Clients::default(),
            picker,
            rng,
            config,
            steps: 0,
            targets: Vec::new(),
            woken: Vec::new(),
            ready: Vec::new(),
            sources: Vec::new(),
        }
    }

    /// The system to spawn into, as live.
    pub fn system(&self) -> &System {
        &self.system
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.config.seed
    }

    /// The run's virtual clock (what [`Ctx::now`](crate::Ctx::now) reads),
    /// for code outside the system that must keep the run's time: a
    /// simulated transport's delays and liveness, say.
    pub fn clock(&self) -> &VirtualClock {
        &self.core.clock
    }

    /// The virtual time now.
    pub fn now(&self) -> Time {
        self.core.clock.now()
    }

    /// Steps run so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Messages handed to handlers so far (injected panics included).
    pub fn handled(&self) -> u64 {
        self.core.handled.get()
    }

    /// Faults injected so far.
    pub fn injected(&self) -> u64 {
        self.core.injected.get()
    }

    /// The trace so far.
    pub fn trace(&self) -> Trace {
        self.core.trace.borrow().clone()
    }

    /// Adds a simulated client: `task` runs on the simulator's thread,
    /// one step each time it is woken, interleaved with the actors as the
    /// seed chooses.
    pub fn client(&mut self, name: &str, task: impl Future<Output = ()> + 'static) {
        self.clients.add(name, Box::pin(task));
    }

    /// Adds a [`Source`] of steps.
    pub fn source(&mut self, source: Box<dyn Source>) {
        let name: Arc<str> = source.name().into();
        self.sources.push((name, source));
    }

    /// Runs steps until nothing is ready and no timer or sleeping client
    /// is left: the system has settled.
    ///
    /// # Panics
    ///
    /// After [`SimConfig::max_steps`] steps, and when a client panics
    /// (an assertion in a client fails the run).
    pub fn run(&mut self) -> Settled {
        self.run_checking(|_| {})
    }

    /// Runs steps until virtual time reaches `t` (or the system settles
    /// before it).
    pub fn run_until(&mut self, t: Time) -> Settled {
        while self.now() < t && self.step() {
            if self.steps >= self.config.max_steps {
                panic!(
                    "kaspar::sim: seed {} ran {} steps before t={:?}",
                    self.config.seed, self.steps, t
                );
            }
        }
        Settled {
            steps: self.steps,
            stuck: self.clients.unfinished(),
        }
    }

    /// [`run`](Self::run), with `invariant` checked after every step: an
    /// invariant that panics fails the run at the first step that broke
    /// it, so its trace ends there, not at the end of the run. The
    /// invariant runs outside any step (a `fast_send` from it reads an
    /// actor's state and is not a step of the run, nor in its trace).
    ///
    /// # Panics
    ///
    /// As [`run`](Self::run), and where `invariant` panics.
    pub fn run_checking(&mut self, mut invariant: impl FnMut(&Sim)) -> Settled {
        invariant(self);
        while self.step() {
            invariant(self);
            if self.steps >= self.config.max_steps {
                panic!(
                    "kaspar::sim: seed {} has not settled after {} steps (a livelock, or clients that never stop)",
                    self.config.seed, self.steps
                );
            }
        }
        Settled {
            steps: self.steps,
            stuck: self.clients.unfinished(),
        }
    }

    /// Runs one step; `false` once the system has settled (nothing ready,
    /// no timer and no sleeping client left).
    pub fn step(&mut self) -> bool {
        let _watched = Scope::enter(Rc::clone(&self.core) as Rc<dyn Watch>);
        let _entered = Core::enter(&self.core);
        loop {
            let now = self.now();
            self.core.sleepers.borrow_mut().wake_due(now);
            self.host.targets(&mut self.targets);
            self.clients.woken(&mut self.woken);
            let timer_due = self.timers_due(now);
            self.ready.clear();
            {
                let mut trace = self.core.trace.borrow_mut();
                self.ready
                    .extend(self.targets.iter().map(|t| Chain::Actor(trace.actor(t))));
            }
            self.ready
                .extend(self.woken.iter().map(|&c| Chain::Client(c)));
            if timer_due {
                self.ready.push(Chain::Timers);
            }
            for (n, (_, source)) in self.sources.iter_mut().enumerate() {
                if source.ready(now) {
                    self.ready.push(Chain::Source(n as u32));
                }
            }
            if self.ready.is_empty() {
                if !self.idle_until_next() {
                    return false;
                }
                continue;
            }
            self.core.step.set(self.steps);
            let i = self.picker.pick(self.steps, &self.ready, &mut self.rng);
            match self.ready[i] {
                Chain::Actor(_) => {
                    let task = self.host.take(i);
                    self.host.run(task);
                }
                Chain::Client(_) => {
                    let (client, name) = self.clients.run(i - self.targets.len());
                    self.core.record(What::Client { client, name });
                    if self.core.yielded.replace(false) {
                        self.picker.yielded(Chain::Client(client));
                    }
                }
                Chain::Timers => {
                    self.core.record(What::Timer);
                    self.core.clock.timers().fire_next(now);
                    // A firing that found its target full is retried at
                    // this same virtual time: under PCT the timers then
                    // yield, so the actor that must make room runs first.
                    self.picker.yielded(Chain::Timers);
                }
                Chain::Source(n) => {
                    let (name, source) = &mut self.sources[n as usize];
                    let did = source.step(now);
                    let name = Arc::clone(name);
                    self.core.record(What::Source { name, did });
                }
            }
            self.steps += 1;
            self.core
                .clock
                .advance_to(now.saturating_add(self.config.tick));
            return true;
        }
    }

    fn timers_due(&self, now: Time) -> bool {
        self.core
            .clock
            .timers()
            .next_due()
            .is_some_and(|due| due <= now)
    }

    /// Nothing is ready: jumps virtual time to the next timer or sleeping
    /// client (a timer overshoots by the jitter fault). `false` if there
    /// is none.
    fn idle_until_next(&mut self) -> bool {
        let timer = self.core.clock.timers().next_due();
        let other = self
            .sources
            .iter()
            .filter_map(|(_, s)| s.next_due())
            .filter(|&t| t > self.core.clock.now())
            .chain(self.core.sleepers.borrow().next_due())
            .min();
        let until = match (timer, other) {
            (None, None) => return false,
            (Some(t), None) => self.jittered(t),
            (None, Some(s)) => s,
            (Some(t), Some(s)) if t < s => self.jittered(t),
            (Some(_), Some(s)) => s,
        };
        self.core.clock.advance_to(until);
        self.core.record(What::Idle { until });
        true
    }

    fn jittered(&mut self, due: Time) -> Time {
        let jitter = self.config.faults.timer_jitter.as_nanos();
        if jitter == 0 {
            return due;
        }
        let late = self
            .core
            .fault_rng
            .borrow_mut()
            .below(jitter.min(u128::from(u64::MAX)) as u64 + 1);
        due.saturating_add(Duration::from_nanos(late))
    }

    /// Stops every actor as a live shutdown does: newest first, one at a
    /// time, each once the one before has stopped, so an upstream actor
    /// drains what it accepted into a downstream still open (each drains,
    /// runs `stopped`, and its watchers hear of it). The last steps run on
    /// this thread, chosen under the seed as any others; the clients are
    /// dropped first. Called by `drop`; call it to look at what the stops
    /// did.
    pub fn shutdown(&mut self) {
        self.clients.clear();
        // As a live shutdown: an actor spawned from now on (a `stopped`
        // hook's, say) starts closed.
        self.system
            .inner
            .closed
            .store(true, crate::base::sync::Ordering::SeqCst);
        let Some(pool) = self.system.inner.sim_pool() else {
            return;
        };
        let mut left = self.config.max_steps;
        pool.stop_each_stepping(|| {
            if left == 0 || self.host.len() == 0 {
                return false;
            }
            self.step();
            left -= 1;
            true
        });
        while self.host.len() > 0 && left > 0 {
            self.step();
            left -= 1;
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        // A run that failed mid-step is unwinding: stop quietly, and never
        // panic again from here.
        let quiet = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.shutdown()));
        drop(quiet);
    }
}
