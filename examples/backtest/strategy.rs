//! The strategy group of `examples/backtest.rs`: market data -> signal ->
//! orders. Shared with `tests/simulation.rs`, which includes this file.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Tick {
    pub seq: u64,
    pub price: i64,
}
#[derive(Clone)]
pub struct Heartbeat;
pub struct Flush;
pub struct Wire {
    pub signal: Addr<Signal>,
    pub orders: Addr<Orders>,
}
pub struct Price(pub Tick);
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    pub seq: u64,
    pub buy: bool,
    pub price: i64,
}
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub at: Time,
    pub ticks: u64,
}
pub struct Record(pub String);

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

pub struct SignalWire(pub Addr<Orders>);

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

#[group]
pub struct Trading {
    pub md: Addr<MarketData>,
    pub signal: Addr<Signal>,
}

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

pub type Trace = (Vec<Order>, Vec<String>);
pub type Shared<T> = Arc<Mutex<Vec<T>>>;

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

pub fn wire(g: &Trading, orders: &Addr<Orders>) {
    g.signal.send(SignalWire(orders.clone())).unwrap();
    g.md.send(Wire {
        signal: g.signal.clone(),
        orders: orders.clone(),
    })
    .unwrap();
}

/// A deterministic synthetic price path.
pub fn ticks(n: u64, seed: u64) -> Vec<(Time, Tick)> {
    let mut x = seed | 1;
    let mut price = 10_000i64;
    (0..n)
        .map(|seq| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            price += (x % 21) as i64 - 10;
            let at = Time::from_nanos(1_000_000 * seq + (x % 500_000));
            (at, Tick { seq, price })
        })
        .collect()
}

#[derive(Debug, Serialize, Deserialize)]
pub enum Input {
    Tick(Tick),
}

pub fn route(g: &Trading, input: Input) -> bool {
    match input {
        Input::Tick(t) => g.md.send(t).is_ok(),
    }
}
