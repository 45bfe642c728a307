//! kaspar's spans (feature `tracing`): one per handled message, with the
//! actor, the message class and the way it was delivered, and the cause of
//! every message as its parent (inline) or as a `follows_from` link
//! (queued), across a group and across kaspar-remote's loopback transport.
//!
//! One recording layer, installed as the global subscriber (actor threads
//! have no other), keeps every span with its fields, its parent and its
//! links, resolved to indices when they are reported: a link that named a
//! span id the registry had reused would point at the wrong record. Each
//! test reads only the spans of its own actors.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use kaspar::prelude::*;
use kaspar::ActorId;
use kaspar_remote::loopback::Loopback;
use kaspar_remote::{Export, Node, RemoteAddr};
use serde::{Deserialize, Serialize};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

// ---------------------------------------------------------------------
// The recording layer.

#[derive(Clone, Debug, PartialEq, Eq)]
enum Val {
    U64(u64),
    U128(u128),
    Str(String),
}

/// One span as it was opened, with the links recorded to it since.
#[derive(Clone, Debug)]
struct Rec {
    name: &'static str,
    target: String,
    fields: BTreeMap<&'static str, Val>,
    /// Index of its parent in the record.
    parent: Option<usize>,
    /// Indices of the spans it follows from.
    follows: Vec<usize>,
}

impl Rec {
    fn str(&self, field: &str) -> &str {
        match self.fields.get(field) {
            Some(Val::Str(s)) => s,
            other => panic!("{field} is not a string field: {other:?} in {self:?}"),
        }
    }

    fn u64(&self, field: &str) -> Option<u64> {
        match self.fields.get(field) {
            Some(Val::U64(v)) => Some(*v),
            None => None,
            other => panic!("{field} is not a u64 field: {other:?} in {self:?}"),
        }
    }

    fn span_id(&self) -> u64 {
        self.u64("span_id")
            .expect("every kaspar span has a span_id")
    }

    fn trace_id(&self) -> u128 {
        match self.fields.get("trace_id") {
            Some(Val::U128(v)) => *v,
            other => panic!("trace_id is not a u128 field: {other:?} in {self:?}"),
        }
    }

    /// What the spans of test 2 are compared on.
    fn summary(&self) -> (String, u64, Option<String>, String, String) {
        (
            self.str("actor").to_owned(),
            self.u64("actor_id").expect("actor_id"),
            match self.fields.get("instance") {
                Some(Val::Str(s)) => Some(s.clone()),
                None => None,
                other => panic!("instance: {other:?}"),
            },
            self.str("class").to_owned(),
            self.str("delivery").to_owned(),
        )
    }
}

#[derive(Default)]
struct Spans {
    all: Vec<Rec>,
    /// The records of the spans open now, by the registry's id.
    live: HashMap<u64, usize>,
    /// Ids reported that named no open span: each a broken invariant.
    unknown: Vec<String>,
}

struct Recorder(Arc<Mutex<Spans>>);

struct Fields<'a>(&'a mut BTreeMap<&'static str, Val>);

impl Visit for Fields<'_> {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name(), Val::U64(value));
    }
    fn record_u128(&mut self, field: &Field, value: u128) {
        self.0.insert(field.name(), Val::U128(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), Val::Str(value.to_owned()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name(), Val::Str(format!("{value:?}")));
    }
}

impl<S> Layer<S> for Recorder
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = ctx.span(id).and_then(|s| s.parent()).map(|p| p.id());
        let mut spans = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let parent = parent.and_then(|p| match spans.live.get(&p.into_u64()) {
            Some(&i) => Some(i),
            None => {
                spans.unknown.push(format!("parent {p:?}"));
                None
            }
        });
        let index = spans.all.len();
        spans.all.push(Rec {
            name: attrs.metadata().name(),
            target: attrs.metadata().target().to_owned(),
            fields,
            parent,
            follows: Vec::new(),
        });
        spans.live.insert(id.into_u64(), index);
    }

    fn on_follows_from(&self, span: &Id, follows: &Id, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (at, from) = (
            spans.live.get(&span.into_u64()),
            spans.live.get(&follows.into_u64()),
        );
        match (at.copied(), from.copied()) {
            (Some(at), Some(from)) => spans.all[at].follows.push(from),
            _ => spans
                .unknown
                .push(format!("follows_from {span:?} {follows:?}")),
        }
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .live
            .remove(&id.into_u64());
    }
}

/// The record, with the recording layer installed as the global
/// subscriber on first use.
fn recorded() -> MutexGuard<'static, Spans> {
    static SPANS: OnceLock<Arc<Mutex<Spans>>> = OnceLock::new();
    SPANS
        .get_or_init(|| {
            let spans = Arc::new(Mutex::new(Spans::default()));
            let subscriber = tracing_subscriber::registry().with(Recorder(spans.clone()));
            tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
            spans
        })
        .lock()
        .unwrap()
}

/// The kaspar spans of `actors`, in the order they were opened, with
/// their indices in the record.
fn spans_of(spans: &Spans, actors: &[ActorId]) -> Vec<(usize, Rec)> {
    let ids: Vec<u64> = actors.iter().map(|a| a.get()).collect();
    spans
        .all
        .iter()
        .enumerate()
        .filter(|(_, r)| r.target == "kaspar" && r.name == "handle")
        .filter(|(_, r)| r.u64("actor_id").is_some_and(|id| ids.contains(&id)))
        .map(|(i, r)| (i, r.clone()))
        .collect()
}

const PATIENCE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------
// Test 1: feed -> strategy -> gateway.

pub struct Tick(pub u64);
pub struct Quote(pub u64);

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Debug)]
#[wire(id = 901)]
pub struct Order(pub u64);

#[actor]
pub struct Feed {
    strategy: Addr<Strategy>,
}

#[actor]
impl Feed {
    #[handler(Tick)]
    fn on_tick(&mut self, t: Tick, _ctx: &mut Ctx<Self>) {
        self.strategy.send(Quote(t.0 * 10)).expect("strategy is up");
    }
}

#[actor]
pub struct Strategy {
    gateway: RemoteAddr<Gateway>,
}

#[actor]
impl Strategy {
    #[handler(Quote)]
    fn on_quote(&mut self, q: Quote, _ctx: &mut Ctx<Self>) {
        self.gateway.send(Order(q.0 + 1)).expect("the link is up");
    }
}

#[actor]
pub struct Gateway {
    filled: Sender<u64>,
}

#[actor(remote)]
impl Gateway {
    #[handler(Order)]
    fn on_order(&mut self, o: Order, _ctx: &mut Ctx<Self>) {
        let _ = self.filled.send(o.0);
    }
}

#[test]
fn a_three_hop_chain_from_feed_to_gateway_is_rebuilt_from_its_spans() {
    drop(recorded());
    let net = Loopback::new(64);
    // Two systems and two nodes: the venue's side and the desk's, as two
    // processes would have them.
    let venue = System::new();
    let (filled_tx, filled) = mpsc::channel();
    let gateway = venue.spawn(Gateway { filled: filled_tx }).start();
    let venue_node = Node::new(net.clone(), "venue").unwrap();
    venue_node.export("gateway", &gateway).unwrap();

    let desk = System::new();
    let desk_node = Node::new(net, "desk").unwrap();
    let remote_gateway = desk_node.lookup::<Gateway>("gateway").unwrap();
    let strategy = desk
        .spawn(Strategy {
            gateway: remote_gateway,
        })
        .start();
    let feed = desk
        .spawn(Feed {
            strategy: strategy.clone(),
        })
        .start();

    // Hop 1, inline: the test's own span is the feed's parent.
    let flow = tracing::info_span!("order_flow");
    flow.in_scope(|| feed.fast_send(Tick(7)).unwrap());
    // Hop 2 queued (feed -> strategy), hop 3 over the loopback
    // (strategy -> gateway, queued there by the venue node's bridge).
    assert_eq!(filled.recv_timeout(PATIENCE).unwrap(), 71);

    let spans = recorded();
    assert_eq!(spans.unknown, Vec::<String>::new());
    let of = |a: ActorId| {
        let mut found = spans_of(&spans, &[a]);
        assert_eq!(found.len(), 1, "one span for {a:?}: {found:#?}");
        found.pop().unwrap()
    };
    let (fi, f) = of(feed.id());
    let (si, s) = of(strategy.id());
    let (gi, g) = of(gateway.id());

    // Rebuilt from the process-independent ids alone: from the gateway up
    // its parent_ids, as a collector of both processes' spans would.
    let kaspar: Vec<&Rec> = [&f, &s, &g].into_iter().collect();
    let by_span_id: HashMap<u64, &Rec> = kaspar.iter().map(|r| (r.span_id(), *r)).collect();
    let mut chain = vec![&g];
    while let Some(parent) = chain.last().unwrap().u64("parent_id") {
        chain.push(
            by_span_id
                .get(&parent)
                .expect("a parent among the chain's spans"),
        );
    }
    chain.reverse();
    let hops: Vec<(&str, &str, &str)> = chain
        .iter()
        .map(|r| (r.str("actor"), r.str("class"), r.str("delivery")))
        .collect();
    assert_eq!(
        hops,
        [
            ("Feed", "Tick", "fast_send"),
            ("Strategy", "Quote", "queued"),
            ("Gateway", "Order", "remote"),
        ]
    );
    let trace = f.trace_id();
    assert_eq!(s.trace_id(), trace);
    assert_eq!(g.trace_id(), trace);
    assert_eq!(trace as u64, f.span_id(), "the chain's first span names it");
    assert_eq!(s.u64("parent_id"), Some(f.span_id()));
    assert_eq!(g.u64("parent_id"), Some(s.span_id()));
    assert_eq!(f.u64("parent_id"), None);

    // And as tracing's own tree: the inline hop nests in its caller's
    // span, the queued hop follows from its sender's, and the remote hop
    // has nothing in this process to point at.
    let flow_rec = &spans.all[f.parent.expect("the feed's span has a parent")];
    assert_eq!(flow_rec.name, "order_flow");
    assert_eq!(f.follows, Vec::<usize>::new());
    assert_eq!((s.parent, s.follows.clone()), (None, vec![fi]));
    assert_eq!((g.parent, g.follows.clone()), (None, vec![]));
    assert!(fi < si && si < gi, "opened in causal order");
    drop(spans);

    drop((desk_node, venue_node));
    desk.shutdown();
    venue.shutdown();
}

// ---------------------------------------------------------------------
// Test 2: the fields, for every way of delivery.

#[derive(Serialize, Deserialize, kaspar_remote::Wire, Debug)]
#[wire(id = 902)]
pub struct Ping;

#[actor]
pub struct Probe {
    pings: u64,
}

#[actor(remote)]
impl Probe {
    #[handler(Ping)]
    fn on_ping(&mut self, _p: Ping, _ctx: &mut Ctx<Self>) -> u64 {
        self.pings += 1;
        self.pings
    }
}

pub struct Arm(pub Addr<Risk>, pub Sender<&'static str>);
pub struct Px(pub u64);
pub struct Wake;
pub struct Check(pub u64);
pub struct Note;

#[actor]
pub struct Book {
    risk: Option<Addr<Risk>>,
    done: Option<Sender<&'static str>>,
}

#[actor]
impl Book {
    #[handler(Arm)]
    fn on_arm(&mut self, a: Arm, _ctx: &mut Ctx<Self>) {
        self.risk = Some(a.0);
        self.done = Some(a.1);
    }

    #[handler(Px)]
    fn on_px(&mut self, p: Px, ctx: &mut Ctx<Self>) {
        let risk = self.risk.as_ref().expect("armed");
        // Inline within the group, then queued on the group's queue.
        let ok = risk.fast_send(Check(p.0)).expect("a member");
        assert!(ok);
        risk.send(Note).expect("a member");
        ctx.schedule_once(Duration::from_millis(1), Wake);
    }

    #[handler(Wake)]
    fn on_wake(&mut self, _w: Wake, _ctx: &mut Ctx<Self>) {
        let _ = self.done.as_ref().expect("armed").send("woke");
    }
}

#[actor]
pub struct Risk;

#[actor]
impl Risk {
    #[handler(Check)]
    fn on_check(&mut self, c: Check, _ctx: &mut Ctx<Self>) -> bool {
        c.0 < 100
    }

    #[handler(Note)]
    fn on_note(&mut self, _n: Note, _ctx: &mut Ctx<Self>) {}
}

#[group]
pub struct Desk {
    pub book: Addr<Book>,
    pub risk: Addr<Risk>,
}

type Summary = (String, u64, Option<String>, String, String);

fn expect(actor: &str, id: ActorId, instance: Option<&str>, class: &str, via: &str) -> Summary {
    (
        actor.to_owned(),
        id.get(),
        instance.map(str::to_owned),
        class.to_owned(),
        via.to_owned(),
    )
}

#[test]
fn every_span_names_its_actor_class_and_delivery() {
    drop(recorded());
    let system = System::new();
    let probe = system.spawn(Probe { pings: 0 }).name("probe-1").start();
    let net = Loopback::new(64);
    let server = Node::new(net.clone(), "probe-side").unwrap();
    server
        .export_with("probe", &probe, Export::new().fast_send())
        .unwrap();
    let client = Node::new(net, "test-side").unwrap();
    let remote: RemoteAddr<Probe> = client.lookup("probe").unwrap();

    assert_eq!(probe.fast_send(Ping).unwrap(), 1);
    probe.send(Ping).unwrap();
    assert_eq!(probe.ask(Ping).unwrap().wait().unwrap(), 3);
    // Run inline on the probe side's bridge thread (a fast_send export).
    assert_eq!(remote.ask(Ping).unwrap().wait().unwrap(), 4);

    let desk = system
        .spawn_group::<Desk>((
            Book {
                risk: None,
                done: None,
            },
            Risk,
        ))
        .name("desk")
        .start();
    let (done_tx, done) = mpsc::channel();
    desk.book.send(Arm(desk.risk.clone(), done_tx)).unwrap();
    desk.book.send(Px(5)).unwrap();
    assert_eq!(done.recv_timeout(PATIENCE).unwrap(), "woke");
    // From outside the group: the group's lock is taken, as any actor's.
    assert!(desk.risk.fast_send(Check(7)).unwrap());

    let spans = recorded();
    assert_eq!(spans.unknown, Vec::<String>::new());
    let probe_spans: Vec<Summary> = spans_of(&spans, &[probe.id()])
        .iter()
        .map(|(_, r)| r.summary())
        .collect();
    let p = |via| expect("Probe", probe.id(), Some("probe-1"), "Ping", via);
    assert_eq!(
        probe_spans,
        [p("fast_send"), p("queued"), p("queued"), p("remote")]
    );

    let (book, risk) = (desk.book.id(), desk.risk.id());
    let desk_spans = spans_of(&spans, &[book, risk]);
    let summaries: Vec<Summary> = desk_spans.iter().map(|(_, r)| r.summary()).collect();
    let d = |actor, id, class, via| expect(actor, id, Some("desk"), class, via);
    assert_eq!(
        summaries,
        [
            d("Book", book, "Arm", "queued"),
            d("Book", book, "Px", "queued"),
            d("Risk", risk, "Check", "group"),
            d("Risk", risk, "Note", "queued"),
            d("Book", book, "Wake", "timer"),
            d("Risk", risk, "Check", "fast_send"),
        ]
    );
    // Inside the group: the inline hop nests in the book's span, the
    // queued one follows from it; both in its trace.
    let (px_at, px) = &desk_spans[1];
    let (_, check) = &desk_spans[2];
    let (_, note) = &desk_spans[3];
    assert_eq!(check.parent, Some(*px_at));
    assert_eq!((note.parent, note.follows.clone()), (None, vec![*px_at]));
    for hop in [check, note] {
        assert_eq!(hop.u64("parent_id"), Some(px.span_id()));
        assert_eq!(hop.trace_id(), px.trace_id());
    }
    // A message sent from outside every handler starts a chain of its own.
    for (_, r) in desk_spans
        .iter()
        .filter(|(_, r)| r.str("class") != "Check" && r.str("class") != "Note")
    {
        assert_eq!(r.u64("parent_id"), None, "{r:?}");
    }
    drop(spans);

    drop((client, server));
    system.shutdown();
}
