//! The `trading_desk` example's system: a feed fanning quotes out to two
//! strategy types through `Recipient<Quote>`, a thread-bound risk check,
//! and an order gateway on its own thread, wired before the first
//! message. `examples/trading_desk.rs` runs it live (its header explains
//! the design); `tests/sim_trading_desk.rs` runs the same [`build`] under
//! `kaspar::sim`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use kaspar::prelude::*;

/// Market data from outside the desk.
pub struct Tick {
    pub instrument: u32,
    pub mid: i64,
}

/// What the feed publishes to every strategy.
#[derive(Clone, Copy, Debug)]
pub struct Quote {
    pub instrument: u32,
    pub bid: i64,
    pub ask: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Buy,
    Sell,
}

/// A strategy's order, checked by risk before it goes out.
#[derive(Clone, Copy, Debug)]
pub struct Order {
    pub strategy: &'static str,
    pub instrument: u32,
    pub side: Side,
    pub qty: i64,
    pub price: i64,
}

/// Asks risk for its counts: (approved, rejected).
pub struct Summary;
/// Asks the gateway how many orders it sent.
pub struct Sent;

#[actor]
pub struct Feed {
    strategies: Vec<Recipient<Quote>>,
    spread: i64,
}

#[actor]
impl Feed {
    #[handler(Tick)]
    fn tick(&mut self, t: Tick, _ctx: &mut Ctx<Self>) {
        let q = Quote {
            instrument: t.instrument,
            bid: t.mid - self.spread,
            ask: t.mid + self.spread,
        };
        for s in &self.strategies {
            // Same thread (one group): each strategy runs inline, now.
            s.fast_send(q).expect("strategies run on the desk's thread");
        }
    }
}

/// Fades moves away from a slow moving average.
#[actor]
pub struct MeanRevert {
    risk: Addr<Risk>,
    average: HashMap<u32, i64>,
}

#[actor]
impl MeanRevert {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) {
        let mid = (q.bid + q.ask) / 2;
        let avg = self.average.entry(q.instrument).or_insert(mid);
        let side = if mid > *avg + 20 {
            Some((Side::Sell, q.bid))
        } else if mid < *avg - 20 {
            Some((Side::Buy, q.ask))
        } else {
            None
        };
        *avg += (mid - *avg) / 16;
        if let Some((side, price)) = side {
            self.risk
                .fast_send(Order {
                    strategy: "mean_revert",
                    instrument: q.instrument,
                    side,
                    qty: 1,
                    price,
                })
                .expect("risk runs on the desk's thread");
        }
    }
}

/// Follows three moves in a row.
#[actor]
pub struct Momentum {
    risk: Addr<Risk>,
    last: HashMap<u32, (i64, i32)>,
}

#[actor]
impl Momentum {
    #[handler(Quote)]
    fn quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) {
        let mid = (q.bid + q.ask) / 2;
        let (last, run) = self.last.entry(q.instrument).or_insert((mid, 0));
        *run = match mid.cmp(last) {
            std::cmp::Ordering::Greater => (*run).max(0) + 1,
            std::cmp::Ordering::Less => (*run).min(0) - 1,
            std::cmp::Ordering::Equal => *run,
        };
        *last = mid;
        if run.abs() >= 3 {
            let (side, price) = if *run > 0 {
                (Side::Buy, q.ask)
            } else {
                (Side::Sell, q.bid)
            };
            *run = 0;
            self.risk
                .fast_send(Order {
                    strategy: "momentum",
                    instrument: q.instrument,
                    side,
                    qty: 2,
                    price,
                })
                .expect("risk runs on the desk's thread");
        }
    }
}

/// Position per instrument, shared with whatever else lives on the desk's
/// thread: an `Rc`, so `Risk` is thread-bound.
type Ledger = Rc<RefCell<HashMap<u32, i64>>>;

#[actor(thread_bound)]
pub struct Risk {
    ledger: Ledger,
    limit: i64,
    gateway: Addr<Gateway>,
    approved: u64,
    rejected: u64,
}

#[actor]
impl Risk {
    #[handler(Order)]
    fn order(&mut self, o: Order, _ctx: &mut Ctx<Self>) {
        let signed = match o.side {
            Side::Buy => o.qty,
            Side::Sell => -o.qty,
        };
        let mut ledger = self.ledger.borrow_mut();
        let position = ledger.entry(o.instrument).or_insert(0);
        if (*position + signed).abs() > self.limit {
            self.rejected += 1;
            return;
        }
        // Another thread: queued. A refusal (the gateway has stopped, or
        // its mailbox is bounded and full) hands the order back: it is not
        // approved, and the position does not move. (Found by running the
        // desk under `kaspar::sim` with full mailboxes injected: approving
        // first approved orders that never went out.)
        match self.gateway.send(o) {
            Ok(()) => {
                *position += signed;
                self.approved += 1;
            }
            Err(_) => self.rejected += 1,
        }
    }

    #[handler(Summary)]
    fn summary(&mut self, _s: Summary, _ctx: &mut Ctx<Self>) -> (u64, u64) {
        (self.approved, self.rejected)
    }
}

#[actor]
pub struct Gateway {
    sent: u64,
    notional: i64,
}

#[actor]
impl Gateway {
    #[handler(Order)]
    fn order(&mut self, o: Order, _ctx: &mut Ctx<Self>) {
        self.sent += 1;
        self.notional += o.qty * o.price;
    }

    #[handler(Sent)]
    fn sent(&mut self, _s: Sent, _ctx: &mut Ctx<Self>) -> (u64, i64) {
        (self.sent, self.notional)
    }
}

#[group]
pub struct Desk {
    pub feed: Addr<Feed>,
    pub mean_revert: Addr<MeanRevert>,
    pub momentum: Addr<Momentum>,
    pub risk: Addr<Risk>,
}

/// Builds the desk into `system`: the gateway on its own thread, then the
/// desk's group, wired before its first message. `main` runs it live; the
/// simulation test (`tests/sim_trading_desk.rs`) builds the same system
/// under `kaspar::sim`.
pub fn build(system: &System) -> (Addr<Gateway>, Desk) {
    let gateway = system
        .spawn(Gateway {
            sent: 0,
            notional: 0,
        })
        .name("gateway-xnas")
        .start();

    // Addresses first, then the states that hold them.
    let prepared = system.prepare_group::<Desk>();
    let peers = prepared.group();
    let to_gateway = gateway.clone();
    let desk = prepared
        .spawn_with(move || {
            // Runs on the desk's thread: the `Rc` is made where it lives.
            let ledger: Ledger = Rc::new(RefCell::new(HashMap::new()));
            (
                Feed {
                    strategies: vec![peers.mean_revert.recipient(), peers.momentum.recipient()],
                    spread: 1,
                },
                MeanRevert {
                    risk: peers.risk.clone(),
                    average: HashMap::new(),
                },
                Momentum {
                    risk: peers.risk.clone(),
                    last: HashMap::new(),
                },
                Risk {
                    ledger,
                    limit: 50,
                    gateway: to_gateway,
                    approved: 0,
                    rejected: 0,
                },
            )
        })
        .record_latency(true)
        .start();
    (gateway, desk)
}
