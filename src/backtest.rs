//! The strategy group of the `backtest` example: market data -> signal ->
//! orders, with the orders going to an actor outside the group. The
//! example runs it live and then replays its journal in a `Simulation`;
//! `tests/simulation.rs` checks that simulations of one input agree.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::Time;
use serde::{Deserialize, Serialize};

use crate::rng::XorShift;

/// One price from the market: the group's input.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Tick {
    /// Position in the feed, from 0.
    pub seq: u64,
    /// The price.
    pub price: i64,
}
/// Timer message: [`MarketData`] reports a [`Status`] to the orders actor.
#[derive(Clone)]
pub struct Heartbeat;
/// Asks [`MarketData`] how many ticks it has handled.
pub struct Flush;
/// Connects [`MarketData`] to the signal and the orders actor, and starts
/// its heartbeat if it has one.
pub struct Wire {
    /// The signal, in the same group.
    pub signal: Addr<Signal>,
    /// The orders actor, outside the group.
    pub orders: Addr<Orders>,
}
/// A tick passed from market data to the signal.
pub struct Price(pub Tick);
/// What the signal decides: buy or sell at the tick's price.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    /// The tick that triggered it.
    pub seq: u64,
    /// Buy (the fast average crossed above the slow one) or sell.
    pub buy: bool,
    /// The tick's price.
    pub price: i64,
}
/// What a heartbeat reports: when, and how many ticks so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The clock's time at the heartbeat.
    pub at: Time,
    /// Ticks handled so far.
    pub ticks: u64,
}
/// A line for the orders actor's log.
pub struct Record(pub String);

/// Takes each tick, counts it and passes it to the signal by `fast_send`;
/// with a heartbeat period, reports its [`Status`] on that timer.
#[actor]
pub struct MarketData {
    signal: Option<Addr<Signal>>,
    orders: Option<Addr<Orders>>,
    ticks: u64,
    heartbeat: Option<Duration>,
}

#[actor]
impl MarketData {
    #[handler(Wire)]
    fn wire(&mut self, msg: Wire, ctx: &mut Ctx<Self>) {
        self.signal = Some(msg.signal);
        self.orders = Some(msg.orders);
        if let Some(period) = self.heartbeat {
            ctx.schedule_every(period, Heartbeat);
        }
    }

    #[handler(Tick)]
    fn tick(&mut self, msg: Tick, _ctx: &mut Ctx<Self>) {
        self.ticks += 1;
        let signal = self.signal.as_ref().expect("wired");
        signal.fast_send(Price(msg)).expect("signal is a member");
    }

    #[handler(Flush)]
    fn flush(&mut self, _msg: Flush, _ctx: &mut Ctx<Self>) -> u64 {
        self.ticks
    }

    #[handler(Heartbeat)]
    fn heartbeat(&mut self, _msg: Heartbeat, ctx: &mut Ctx<Self>) {
        let status = Status {
            at: ctx.now(),
            ticks: self.ticks,
        };
        let orders = self.orders.as_ref().expect("wired");
        orders
            .send(Record(format!("{status:?}")))
            .expect("orders open");
    }
}

/// Moving-average crossover over the last `fast` and `slow` prices.
#[actor]
pub struct Signal {
    prices: Vec<i64>,
    fast: usize,
    slow: usize,
    long: Option<bool>,
    orders: Option<Addr<Orders>>,
}

/// Connects the signal to the orders actor.
pub struct SignalWire(pub Addr<Orders>);

/// The integer mean of `v` (0 for none).
pub fn mean(v: &[i64]) -> i64 {
    v.iter().sum::<i64>() / v.len().max(1) as i64
}

#[actor]
impl Signal {
    #[handler(SignalWire)]
    fn wire(&mut self, msg: SignalWire, _ctx: &mut Ctx<Self>) {
        self.orders = Some(msg.0);
    }

    #[handler(Price)]
    fn price(&mut self, msg: Price, ctx: &mut Ctx<Self>) {
        self.prices.push(msg.0.price);
        if self.prices.len() < self.slow {
            return;
        }
        let n = self.prices.len();
        let fast = mean(&self.prices[n - self.fast..]);
        let slow = mean(&self.prices[n - self.slow..]);
        let long = fast > slow;
        if self.long != Some(long) {
            self.long = Some(long);
            let order = Order {
                seq: msg.0.seq,
                buy: long,
                price: msg.0.price,
            };
            let orders = self.orders.as_ref().expect("wired");
            orders.send(order).expect("orders open");
            let _ = ctx.now();
        }
    }
}

/// Outside the group: records every order it gets, and a log line for
/// each order and status, stamped with its clock's time.
#[actor]
pub struct Orders {
    sent: Arc<Mutex<Vec<Order>>>,
    log: Arc<Mutex<Vec<String>>>,
}

#[actor]
impl Orders {
    #[handler(Order)]
    fn order(&mut self, msg: Order, ctx: &mut Ctx<Self>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{:?} {:?}", ctx.now(), msg));
        self.sent.lock().unwrap().push(msg);
    }

    #[handler(Record)]
    fn record(&mut self, msg: Record, ctx: &mut Ctx<Self>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{:?} {}", ctx.now(), msg.0));
    }
}

/// The strategy group: market data and the signal on one thread.
#[group]
pub struct Trading {
    /// The input side.
    pub md: Addr<MarketData>,
    /// The moving-average crossover.
    pub signal: Addr<Signal>,
}

/// The group's initial members: fast and slow averages over 3 and 8
/// prices, heartbeat every `heartbeat` if given. Live runs and simulations
/// start from these.
pub fn members(heartbeat: Option<Duration>) -> (MarketData, Signal) {
    (
        MarketData {
            signal: None,
            orders: None,
            ticks: 0,
            heartbeat,
        },
        Signal {
            prices: Vec::new(),
            fast: 3,
            slow: 8,
            long: None,
            orders: None,
        },
    )
}

/// What a run leaves behind: the orders, and the orders actor's log.
pub type Trace = (Vec<Order>, Vec<String>);
/// A list an actor appends to and the caller reads after the run.
pub type Shared<T> = Arc<Mutex<Vec<T>>>;

/// A fresh orders actor, with the lists it will append its orders and its
/// log lines to.
pub fn orders_actor() -> (Orders, Shared<Order>, Shared<String>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::new(Mutex::new(Vec::new()));
    (
        Orders {
            sent: sent.clone(),
            log: log.clone(),
        },
        sent,
        log,
    )
}

/// Wires a started group to `orders`, by `send` through the group's one
/// queue: call it before sending the first tick.
pub fn wire(g: &Trading, orders: &Addr<Orders>) {
    g.signal.send(SignalWire(orders.clone())).unwrap();
    g.md.send(Wire {
        signal: g.signal.clone(),
        orders: orders.clone(),
    })
    .unwrap();
}

/// A deterministic synthetic price path: `n` ticks about 1 ms apart
/// (jittered by up to 0.5 ms), a random walk from 10,000 in steps of
/// -10..=10. The same seed gives the same ticks.
pub fn ticks(n: u64, seed: u64) -> Vec<(Time, Tick)> {
    let mut rng = XorShift::new(seed);
    let mut price = 10_000i64;
    (0..n)
        .map(|seq| {
            price += rng.range(-10, 10);
            let at = Time::from_nanos(1_000_000 * seq + rng.below(500_000));
            (at, Tick { seq, price })
        })
        .collect()
}

/// What the journal records: everything that enters the group.
#[derive(Debug, Serialize, Deserialize)]
pub enum Input {
    /// A market tick, for [`MarketData`].
    Tick(Tick),
}

/// Delivers one journaled input to the group; `false` if it was refused.
pub fn route(g: &Trading, input: Input) -> bool {
    match input {
        Input::Tick(t) => g.md.send(t).is_ok(),
    }
}
