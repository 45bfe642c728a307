//! Generic actors: one `#[actor]` declaration with type or const
//! parameters, several concrete instances of it. Each instance is an actor
//! type of its own, spawned, addressed and grouped like any other; the call
//! chain tells actors apart by identity, whatever their type, and a
//! handler's class is its place in the impl block, whatever the parameters.

use std::cell::RefCell;
use std::mem::size_of;

use kaspar::prelude::*;
use kaspar::{Actor, ActorConfig, ActorId, ClassId, Handler, ReplyTo};
use static_assertions::assert_type_eq_all;

/// How a strategy turns a quote into a price: the strategy's parameter.
pub trait Pricer: Send + 'static {
    fn price(&self, bid: i64, ask: i64) -> i64;
}

/// Prices at the mid.
#[derive(Debug, PartialEq)]
pub struct Linear;

impl Pricer for Linear {
    fn price(&self, bid: i64, ask: i64) -> i64 {
        (bid + ask) / 2
    }
}

/// Prices at the mid moved by a fixed skew.
#[derive(Debug, PartialEq)]
pub struct Skewed(pub i64);

impl Pricer for Skewed {
    fn price(&self, bid: i64, ask: i64) -> i64 {
        (bid + ask) / 2 + self.0
    }
}

pub struct Quote {
    pub bid: i64,
    pub ask: i64,
}

/// How many quotes the strategy has priced.
pub struct Priced;

/// A synchronous chain: the receiver passes the rest of `hops` to the
/// first of them with `fast_send`; the last one prices `quote` itself, or,
/// where `then` is set, has `then` price it, also with `fast_send`.
pub struct Bounce {
    pub hops: Vec<Recipient<Bounce, Outcome>>,
    pub then: Option<Recipient<Quote, i64>>,
    pub quote: (i64, i64),
}

/// The price at the end of a `Bounce`, or the call the chain refused.
pub type Outcome = Result<i64, Refused>;

/// A `fast_send` refused as a cycle: whom it targeted and the chain of
/// (actor, class) keys at that moment, outermost first.
#[derive(Debug, PartialEq)]
pub struct Refused {
    pub target: ActorId,
    pub chain: Vec<(ActorId, ClassId)>,
}

fn refused<M>(e: FastSendError<M>) -> Refused {
    match e {
        FastSendError::Cycle { target, chain, .. } => Refused {
            target: target.id,
            chain: chain
                .frames()
                .iter()
                .map(|f| (f.actor(), f.class()))
                .collect(),
        },
        other => panic!("expected a cycle, got {other}"),
    }
}

/// The next step of a `Bounce` at an actor pricing with `pricer`.
fn bounce_on(msg: Bounce, pricer: &impl Pricer) -> Outcome {
    let Bounce {
        mut hops,
        then,
        quote: (bid, ask),
    } = msg;
    if hops.is_empty() {
        return match then {
            Some(then) => then.fast_send(Quote { bid, ask }).map_err(refused),
            None => Ok(pricer.price(bid, ask)),
        };
    }
    let next = hops.remove(0);
    let rest = Bounce {
        hops,
        then,
        quote: (bid, ask),
    };
    next.fast_send(rest).map_err(refused)?
}

// ---- a generic actor whose messages do not name its parameter -----------

#[actor]
pub struct Strategy<P: Pricer> {
    pricer: P,
    priced: u64,
}

impl<P: Pricer> Strategy<P> {
    pub fn new(pricer: P) -> Self {
        Strategy { pricer, priced: 0 }
    }
}

#[actor]
impl<P: Pricer> Strategy<P> {
    #[handler(Quote)]
    fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
        self.priced += 1;
        self.pricer.price(q.bid, q.ask)
    }

    #[handler(Priced)]
    fn on_priced(&mut self, _msg: Priced, _ctx: &mut Ctx<Self>) -> u64 {
        self.priced
    }

    #[handler(Bounce)]
    fn on_bounce(&mut self, msg: Bounce, _ctx: &mut Ctx<Self>) -> Outcome {
        bounce_on(msg, &self.pricer)
    }
}

// ---- a reentrant generic actor whose messages name its parameter --------

/// Replaces the pricer; the reply is the one it replaced.
pub struct Swap<P>(pub P);

#[actor(reentrant, policy = permissive)]
pub struct Hedger<P>
where
    P: Pricer,
{
    pricer: RefCell<P>,
}

#[actor]
impl<P> Hedger<P>
where
    P: Pricer,
{
    #[handler(Swap<P>)]
    fn on_swap(&self, msg: Swap<P>, _ctx: &mut Ctx<Self>) -> P {
        self.pricer.replace(msg.0)
    }

    #[handler(Bounce)]
    fn on_bounce(&self, msg: Bounce, _ctx: &mut Ctx<Self>) -> Outcome {
        bounce_on(msg, &*self.pricer.borrow())
    }

    #[handler(Quote)]
    fn on_quote(&self, q: Quote, _ctx: &mut Ctx<Self>) -> i64 {
        self.pricer.borrow().price(q.bid, q.ask)
    }
}

// ---- a const-generic actor ----------------------------------------------

/// A sample for the window.
pub struct Sample(pub i64);
/// The window's samples, oldest first, where it is full.
pub struct Samples;

/// The last `N` samples.
#[actor]
pub struct Window<const N: usize> {
    seen: Vec<i64>,
}

#[actor]
impl<const N: usize> Window<N> {
    /// The mean of the last `N` samples, once there are `N`.
    #[handler(Sample)]
    fn on_sample(&mut self, msg: Sample, _ctx: &mut Ctx<Self>) -> Option<i64> {
        self.seen.push(msg.0);
        let last = self
            .seen
            .len()
            .checked_sub(N)
            .map(|from| &self.seen[from..])?;
        Some(last.iter().sum::<i64>() / N as i64)
    }

    #[handler(Samples)]
    fn on_samples(&mut self, _msg: Samples, _ctx: &mut Ctx<Self>) -> Option<[i64; N]> {
        let from = self.seen.len().checked_sub(N)?;
        self.seen[from..].try_into().ok()
    }
}

// ---- the generated types --------------------------------------------------

// No message or reply of `Strategy` names `P`: every instance queues the
// one plain `StrategyMsg`.
assert_type_eq_all!(
    <Strategy<Linear> as Actor>::Msg,
    <Strategy<Skewed> as Actor>::Msg,
    StrategyMsg
);
// `Swap<P>` does: the enum takes the parameter.
assert_type_eq_all!(<Hedger<Linear> as Actor>::Msg, HedgerMsg<Linear>);
assert_type_eq_all!(<Hedger<Skewed> as Actor>::Msg, HedgerMsg<Skewed>);
// `[i64; N]` in a reply names the const parameter.
assert_type_eq_all!(<Window<3> as Actor>::Msg, WindowMsg<3>);

#[test]
fn a_generic_message_enum_is_as_large_as_its_handlers_variants() {
    // `HedgerMsg<P>` has a hidden variant that uses `P`; it holds no value,
    // so it adds nothing to the enum's size.
    #[allow(dead_code)]
    enum Handwritten {
        Swap(Swap<Skewed>, ReplyTo<Skewed>),
        Bounce(Bounce, ReplyTo<Outcome>),
        Quote(Quote, ReplyTo<i64>),
    }
    assert_eq!(size_of::<HedgerMsg<Skewed>>(), size_of::<Handwritten>());
}

#[test]
fn every_instance_has_the_declared_name_and_options() {
    assert_eq!(<Strategy<Linear> as ActorConfig>::NAME, "Strategy");
    assert_eq!(<Strategy<Skewed> as ActorConfig>::NAME, "Strategy");
    assert_eq!(<Window<2> as ActorConfig>::NAME, "Window");
    assert_eq!(
        <Hedger<Linear> as ActorConfig>::POLICY,
        Some(CyclePolicy::Permissive)
    );
    assert_eq!(<Hedger<Skewed> as ActorConfig>::NAME, "Hedger");
}

#[test]
fn a_handler_has_the_class_of_its_place_in_the_impl_block_in_every_instance() {
    let index = |class: ClassId| class.index();
    assert_eq!(index(<Strategy<Linear> as Handler<Quote>>::CLASS), 0);
    assert_eq!(index(<Strategy<Skewed> as Handler<Quote>>::CLASS), 0);
    assert_eq!(index(<Strategy<Linear> as Handler<Bounce>>::CLASS), 2);
    assert_eq!(index(<Strategy<Skewed> as Handler<Bounce>>::CLASS), 2);
    // Another impl block, another order.
    assert_eq!(index(<Hedger<Linear> as Handler<Bounce>>::CLASS), 1);
    assert_eq!(index(<Hedger<Skewed> as Handler<Quote>>::CLASS), 2);
    assert_eq!(
        <Strategy<Linear> as Actor>::CLASSES,
        ["Quote", "Priced", "Bounce"]
    );
    assert_eq!(
        <Hedger<Skewed> as Actor>::CLASSES,
        ["Swap<P>", "Bounce", "Quote"]
    );
}

// ---- through the public API ----------------------------------------------

#[test]
fn two_instances_of_one_generic_actor_serve_side_by_side_in_one_system() {
    let system = System::new();
    let linear = system.spawn(Strategy::new(Linear)).start();
    let skewed = system.spawn(Strategy::new(Skewed(3))).start();

    assert_eq!(linear.fast_send(Quote { bid: 100, ask: 110 }).unwrap(), 105);
    assert_eq!(skewed.fast_send(Quote { bid: 100, ask: 110 }).unwrap(), 108);

    linear.send(Quote { bid: 0, ask: 0 }).unwrap();
    skewed.send(Quote { bid: 0, ask: 0 }).unwrap();
    skewed.send(Quote { bid: 0, ask: 0 }).unwrap();
    assert_eq!(
        linear
            .ask(Quote { bid: 10, ask: 20 })
            .unwrap()
            .wait()
            .unwrap(),
        15
    );
    assert_eq!(
        skewed
            .ask(Quote { bid: 10, ask: 20 })
            .unwrap()
            .wait()
            .unwrap(),
        18
    );

    // Each queue is served in order, so the counts include the sends.
    assert_eq!(linear.ask(Priced).unwrap().wait().unwrap(), 3);
    assert_eq!(skewed.ask(Priced).unwrap().wait().unwrap(), 4);
    assert_eq!(linear.name(), "Strategy");
    assert_ne!(linear.id(), skewed.id());
    system.shutdown();
}

#[test]
fn a_generic_message_carries_the_instances_own_parameter() {
    let system = System::new();
    let hedger = system
        .spawn(Hedger {
            pricer: RefCell::new(Skewed(1)),
        })
        .start();
    assert_eq!(hedger.fast_send(Swap(Skewed(-1))).unwrap(), Skewed(1));
    assert_eq!(hedger.fast_send(Quote { bid: 10, ask: 20 }).unwrap(), 14);
    assert_eq!(
        hedger.ask(Swap(Skewed(5))).unwrap().wait().unwrap(),
        Skewed(-1)
    );
    assert_eq!(
        hedger
            .ask(Quote { bid: 10, ask: 20 })
            .unwrap()
            .wait()
            .unwrap(),
        20
    );
    system.shutdown();
}

#[test]
fn a_const_generic_actor_takes_its_size_from_its_parameter() {
    let system = System::new();
    let two = system.spawn(Window::<2> { seen: Vec::new() }).start();
    let three = system.spawn(Window::<3> { seen: Vec::new() }).start();
    let fed: Vec<(Option<i64>, Option<i64>)> = [3, 6, 9, 12]
        .into_iter()
        .map(|s| {
            (
                two.fast_send(Sample(s)).unwrap(),
                three.fast_send(Sample(s)).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fed,
        [
            (None, None),
            (Some(4), None),
            (Some(7), Some(6)),
            (Some(10), Some(9))
        ]
    );
    assert_eq!(two.ask(Samples).unwrap().wait().unwrap(), Some([9, 12]));
    assert_eq!(
        three.ask(Samples).unwrap().wait().unwrap(),
        Some([6, 9, 12])
    );
    system.shutdown();
}

#[test]
fn instances_of_one_generic_actor_are_members_of_one_group() {
    #[group]
    pub struct Desk {
        pub linear: Addr<Strategy<Linear>>,
        pub skewed: Addr<Strategy<Skewed>>,
    }

    let system = System::new();
    let desk = system
        .spawn_group::<Desk>((Strategy::new(Linear), Strategy::new(Skewed(3))))
        .start();
    assert_eq!(
        desk.linear
            .ask(Quote { bid: 100, ask: 110 })
            .unwrap()
            .wait()
            .unwrap(),
        105
    );
    desk.skewed.send(Quote { bid: 0, ask: 0 }).unwrap();
    // From one member into the other, inline on the group's thread.
    let hop = Bounce {
        hops: vec![desk.skewed.recipient()],
        then: None,
        quote: (100, 110),
    };
    assert_eq!(desk.linear.fast_send(hop).unwrap(), Ok(108));
    // Behind the queued quote in the group's one queue.
    assert_eq!(desk.skewed.ask(Priced).unwrap().wait().unwrap(), 1);
    assert_eq!(desk.linear.fast_send(Priced).unwrap(), 1);
    system.shutdown();
}

// ---- cycle detection ---------------------------------------------------------

#[test]
fn a_chain_back_into_an_instance_is_a_cycle_whatever_the_other_instances_are() {
    let system = System::new();
    let a = system.spawn(Strategy::new(Linear)).start();
    let b = system.spawn(Strategy::new(Skewed(3))).start();
    // Another actor of `a`'s type is not `a`: a chain through it is no
    // cycle.
    let c = system.spawn(Strategy::new(Linear)).start();

    let through_c = Bounce {
        hops: vec![b.recipient(), c.recipient()],
        then: None,
        quote: (100, 110),
    };
    assert_eq!(a.fast_send(through_c).unwrap(), Ok(105));

    let back_to_a = Bounce {
        hops: vec![b.recipient(), a.recipient()],
        then: None,
        quote: (100, 110),
    };
    let bounce = <Strategy<Linear> as Handler<Bounce>>::CLASS;
    assert_eq!(
        a.fast_send(back_to_a).unwrap(),
        Err(Refused {
            target: a.id(),
            chain: vec![(a.id(), bounce), (b.id(), bounce)],
        })
    );
    assert_eq!(a.stats().cycles, 1);
    assert_eq!(b.stats().cycles, 0);
    system.shutdown();
}

#[test]
fn a_permissive_generic_actor_is_re_entered_only_with_another_class() {
    let system = System::new();
    let hedger = system
        .spawn(Hedger {
            pricer: RefCell::new(Linear),
        })
        .start();
    let strategy = system.spawn(Strategy::new(Skewed(3))).start();

    // Hedger/Bounce -> Strategy/Bounce -> Hedger/Quote: another class of
    // the hedger, allowed by its permissive policy.
    let other_class = Bounce {
        hops: vec![strategy.recipient()],
        then: Some(hedger.recipient()),
        quote: (100, 110),
    };
    assert_eq!(hedger.fast_send(other_class).unwrap(), Ok(105));

    // Hedger/Bounce -> Strategy/Bounce -> Hedger/Bounce: the same class.
    let same_class = Bounce {
        hops: vec![strategy.recipient(), hedger.recipient()],
        then: None,
        quote: (100, 110),
    };
    assert_eq!(
        hedger.fast_send(same_class).unwrap(),
        Err(Refused {
            target: hedger.id(),
            chain: vec![
                (hedger.id(), <Hedger<Linear> as Handler<Bounce>>::CLASS),
                (strategy.id(), <Strategy<Skewed> as Handler<Bounce>>::CLASS),
            ],
        })
    );
    assert_eq!(hedger.stats().cycles, 1);
    system.shutdown();
}
