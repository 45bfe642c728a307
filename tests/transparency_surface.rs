//! Receiver transparency, kept at review time: the public surface of the
//! types a handler can reach (`Ctx`; `Addr`; `Call` from
//! `Addr::with_policy`; `Ask` from `ask`; `Recipient` from
//! `Addr::recipient`; `Spawn` and `GroupSpawn` from `Ctx::spawn*`;
//! `DeadLetters` from `Addr::dead_letters`) is compared, method by method
//! and trait by trait, with a list reviewed for what it reveals to a
//! handler. Plain data they return (`ActorStats`, `LatencyStats`,
//! `Target`, `CallChain`, `WaitEdge`, the errors) is not listed here: what
//! it holds is compared way by way in `transparency_behaviour.rs`, which
//! runs what this test only names.
//!
//! The trybuild cases (`tests/ui/ctx-reveals-*`) show that particular
//! names do not exist; they cannot catch a *new* method that reveals the
//! delivery mode. This test does: it reads the runtime's source, and fails
//! when one of these types gains (or loses) a public method or a trait
//! impl that is not on the list below. Adding one means answering, in
//! review, whether a handler could use it to tell how it was reached (inline
//! on a caller's thread or dequeued on its own), which thread runs it,
//! whether a sender waits on it, or how deep its mailbox is, and then
//! updating the list and the transparency chapter.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// The reviewed surface. For each entry: what it gives a handler.
const REVIEWED: &[&str] = &[
    // Ctx: mode-neutral services only.
    "Ctx::myself",         // its own address: the same in every mode
    "Ctx::now",            // the injected clock (virtual under simulation)
    "Ctx::schedule_once",  // timers, delivered as ordinary messages
    "Ctx::schedule_every", //
    "Ctx::cancel",         //
    "Ctx::stop",           // stop accepting; queued messages still run
    "Ctx::spawn",          // a new actor in this actor's system: the same in every mode
    "Ctx::spawn_with",     //
    "Ctx::spawn_group",    //
    "impl Debug for Ctx",  // prints the actor's name and id, nothing else
    // Addr: identity, delivery, supervision.
    "Addr::id",
    "Addr::name",
    "Addr::target",
    "Addr::stats",   // instrumentation by design: see the transparency chapter
    "Addr::latency", // the same: service times, recorded alike in every mode
    "Addr::is_stopped",
    "Addr::send",
    "Addr::ask",
    "Addr::request",
    "Addr::with_policy",
    "Addr::fast_send",
    "Addr::fast_send_spin",
    "Addr::fast_send_x",
    "Addr::fast_send_void",
    "Addr::fast_send_adaptive",
    "Addr::supervise",
    "Addr::watch",
    "Addr::watch_restarts",
    "Addr::dead_letters",
    "Addr::stop",      // stops accepting; what is queued still runs
    "Addr::recipient", // the same address, type-erased
    "impl Clone for Addr",
    "impl Debug for Addr",
    "impl PartialEq for Addr",
    "impl Eq for Addr",
    "impl Deliver for Addr", // private: the vtable behind `Recipient`
    // Call: the synchronous operations under a per-call policy.
    "Call::fast_send",
    "Call::fast_send_spin",
    "Call::fast_send_x",
    "Call::fast_send_void",
    "Call::fast_send_adaptive",
    // Ask, from `Addr::ask` or `Recipient::ask`: the pending reply. A wait
    // whose reply needs a lock this thread holds (an actor asking itself,
    // dequeued or inline) is refused with `Deadlock` in every mode; the
    // outcomes are compared way by way in `transparency_behaviour.rs`.
    "Ask::wait",
    "Ask::wait_timeout",
    "Ask::try_take",       // the reply if it is there: no lock, no mode
    "Ask::target",         // the actor asked: the same in every mode
    "impl Future for Ask", // `.await` from an executor: polls the same slot
    "impl Debug for Ask",  // prints `Ask(..)`
    "impl Drop for Ask",   // recycles an answered slot into this thread's cache
    // Recipient, from `Addr::recipient`: the same operations as `Addr`,
    // type-erased behind one vtable.
    "Recipient::id",
    "Recipient::target",
    "Recipient::send",
    "Recipient::ask",
    "Recipient::request",
    "Recipient::fast_send",
    "Recipient::fast_send_spin",
    "Recipient::fast_send_x",
    "Recipient::fast_send_adaptive",
    "Recipient::fast_send_void",
    "Recipient::fast_send_with_policy",
    "impl Clone for Recipient",
    "impl Debug for Recipient", // prints the actor's name and id
    "impl From for Recipient",  // from an `Addr`
    // Spawn and GroupSpawn, from `Ctx::spawn`, `Ctx::spawn_with` and
    // `Ctx::spawn_group`: options for a new actor or group, then its start,
    // in the handler's system, whichever way the handler was reached.
    "Spawn::name",
    "Spawn::record_latency",
    // Attaches a flight recorder to the new actor: what it records is the
    // child's queue, the same whichever way the spawning handler ran.
    "Spawn::flight_recorder",
    // Runs the new actor on the system's worker pool instead of a thread
    // of its own: where the child runs, decided by the spawning handler
    // the same way whichever way it was reached.
    "Spawn::pooled",
    "Spawn::supervise",
    "Spawn::restart_with",
    "Spawn::mailbox",
    "Spawn::policy",
    "Spawn::idle",
    "Spawn::max_batch",
    "Spawn::placement",
    "Spawn::start_placed", // the placement outcome is the new thread's, not the caller's
    "Spawn::start",
    "impl Debug for Spawn",
    "GroupSpawn::record_latency",
    "GroupSpawn::flight_recorder", // as `Spawn::flight_recorder`, for the new group
    "GroupSpawn::pooled",          // as `Spawn::pooled`, for the new group
    "GroupSpawn::name",
    "GroupSpawn::mailbox",
    "GroupSpawn::policy",
    "GroupSpawn::idle",
    "GroupSpawn::max_batch",
    "GroupSpawn::placement",
    "GroupSpawn::start_placed",
    "GroupSpawn::start",
    "impl Debug for GroupSpawn",
    // DeadLetters, from `Addr::dead_letters`: the system's sink, shared by
    // every actor of the system; its counts do not depend on how a
    // handler was reached.
    "DeadLetters::new",
    "DeadLetters::subscribe",
    "DeadLetters::counts",
    "DeadLetters::total",
    "impl Debug for DeadLetters", // its counts and subscriber count
    "impl Default for DeadLetters",
];

const TYPES: &[&str] = &[
    "Ctx",
    "Addr",
    "Call",
    "Ask",
    "Recipient",
    "Spawn",
    "GroupSpawn",
    "DeadLetters",
];

/// The public methods and trait impls of `TYPES` found in `src`.
fn surface(src: &str, found: &mut BTreeSet<String>) {
    let bytes = src.as_bytes();
    let mut at = 0;
    while let Some(offset) = src[at..].find("\nimpl") {
        let start = at + offset + 1;
        let Some(open) = src[start..].find('{').map(|o| start + o) else {
            break;
        };
        let header = src[start..open]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        at = open + 1;
        let (trait_name, self_ty) = match header.split_once(" for ") {
            Some((before, after)) => (Some(before), after),
            None => (None, header.as_str()),
        };
        // The self type is the last path segment before its generics (a
        // type without generics is the whole word).
        let self_ty = self_ty.rsplit(' ').find(|w| {
            TYPES
                .iter()
                .any(|t| w == t || w.starts_with(&format!("{t}<")))
        });
        let Some(ty) = self_ty.and_then(|w| w.split('<').next()) else {
            continue;
        };
        if let Some(tr) = trait_name {
            found.insert(format!("impl {} for {ty}", trait_of(tr)));
        }
        let mut depth = 1;
        let mut end = open + 1;
        while depth > 0 && end < bytes.len() {
            match bytes[end] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            end += 1;
        }
        for line in src[open + 1..end].lines() {
            if let Some(rest) = line.strip_prefix("    pub fn ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.insert(format!("{ty}::{name}"));
            }
        }
    }
}

/// `impl<A: Actor, M> fmt::Debug<X>` -> `Debug`: the trait's last path
/// segment, without the impl's generics or the trait's.
fn trait_of(header: &str) -> &str {
    let mut rest = header.trim_start_matches("impl");
    if rest.starts_with('<') {
        let mut depth = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                rest = &rest[i + 1..];
                break;
            }
        }
    }
    let path = rest.trim().split(['<', ' ']).next().unwrap_or("");
    path.rsplit("::").next().unwrap_or(path)
}

fn walk(dir: &Path, found: &mut BTreeSet<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            surface(&fs::read_to_string(&path).unwrap(), found);
        }
    }
}

#[test]
fn what_a_handler_can_reach_is_exactly_the_reviewed_surface() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("kaspar/src");
    let mut found = BTreeSet::new();
    walk(&src, &mut found);
    let reviewed: BTreeSet<String> = REVIEWED.iter().map(|s| s.to_string()).collect();
    let added: Vec<_> = found.difference(&reviewed).collect();
    let removed: Vec<_> = reviewed.difference(&found).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the public surface of the types a handler can reach changed.\n\
         new, not yet reviewed for receiver transparency: {added:?}\n\
         reviewed but gone: {removed:?}\n\
         Review each new item (can a handler use it to learn how it was \
         reached?), then update REVIEWED here and book/src/transparency.md."
    );
}

#[test]
fn the_scan_sees_a_new_method_and_a_new_trait_impl() {
    // The scanner itself, on a made-up source: a test that cannot fail
    // would prove nothing.
    let src = "\nimpl<'a, A: Actor> Ctx<'a, A> {\n    pub fn myself(&self) {}\n    pub fn was_inline(&self) -> bool { true }\n    fn private(&self) {}\n}\n\nimpl<A: Actor> std::ops::Deref for Addr<A> {\n    type Target = ();\n}\n\nimpl<A, M, R> Into<M, R> for Addr<A>\nwhere\n    A: Handler<M, Reply = R>,\n{\n}\n\nimpl DeadLetters {\n    pub fn drained_inline(&self) -> u64 { 0 }\n}\n\nimpl AskError {\n    pub fn not_a_handle(&self) {}\n}\n";
    let mut found = BTreeSet::new();
    surface(src, &mut found);
    let found: Vec<_> = found.into_iter().collect();
    assert_eq!(
        found,
        [
            "Ctx::myself",
            "Ctx::was_inline",
            // A type without generics is seen too; one whose name only
            // starts like a listed type's (`AskError`) is not.
            "DeadLetters::drained_inline",
            "impl Deref for Addr",
            "impl Into for Addr"
        ]
    );
}
