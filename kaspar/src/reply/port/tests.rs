//! Ports: each kind of route through delivery, refusal and drop.

use std::sync::Arc;

use super::*;
use crate::reply::{ReplySink, ReplyTo};

/// A sink with ports that writes down what reached it.
#[derive(Default)]
struct Log {
    ports: Ports,
    heard: parking_lot::Mutex<Vec<String>>,
}

// SAFETY: a field, dropped with the log.
unsafe impl HasPorts for Log {
    fn ports(&self) -> &Ports {
        &self.ports
    }
}

impl ReplySink<u32> for Log {
    fn deliver(self: Arc<Self>, reply: u32) {
        self.heard.lock().push(format!("u32 {reply}"));
    }

    fn unanswered(self: Arc<Self>, why: AskError) {
        self.heard.lock().push(format!("u32 {why:?}"));
    }

    fn kind(&self) -> &'static str {
        "Log"
    }
}

impl ReplySink<String> for Log {
    fn deliver(self: Arc<Self>, reply: String) {
        self.heard.lock().push(reply);
    }
}

#[test]
fn a_sink_keeps_one_port_per_reply_type_and_every_route_lets_go_of_it() {
    let log = Arc::new(Log::default());
    ReplyTo::<u32>::shared(&log).deliver(1);
    assert_eq!(log.ports.len(), 1);
    let route = ReplyTo::<u32>::shared(&log);
    assert_eq!(format!("{route:?}"), "Log");
    assert_eq!(Arc::strong_count(&log), 2, "the route holds the sink");
    drop(route);
    ReplyTo::<u32>::shared(&log).fail(AskError::Timeout(None));
    ReplyTo::<String>::shared(&log).deliver("text".into());
    drop(ReplyTo::<String>::shared(&log));
    ReplyTo::<u32>::shared(&log).deliver(2);
    assert_eq!(log.ports.len(), 2, "one port for u32, one for String");
    assert_eq!(
        *log.heard.lock(),
        [
            "u32 1",
            "u32 Dropped(None)",
            "u32 Timeout(None)",
            "text",
            "u32 2"
        ]
    );
    assert_eq!(Arc::strong_count(&log), 1, "every route let go of the sink");
}

#[test]
fn routes_outliving_every_other_handle_keep_the_sink_and_its_port() {
    let log = Arc::new(Log::default());
    let (a, b) = (ReplyTo::<u32>::shared(&log), ReplyTo::<u32>::shared(&log));
    let heard = Arc::downgrade(&log);
    drop(log);
    a.deliver(7);
    assert!(heard.upgrade().is_some(), "the second route holds it");
    b.deliver(8);
    assert!(heard.upgrade().is_none(), "the last route freed it");
}

/// An owned sink that writes down what reached it.
#[derive(Debug)]
struct Note(Arc<parking_lot::Mutex<Vec<String>>>);

impl OwnedSink<u32> for Note {
    fn deliver(self, reply: u32) {
        self.0.lock().push(format!("reply {reply}"));
    }

    fn unanswered(self, why: AskError) {
        self.0.lock().push(format!("{why:?}"));
    }

    fn kind(&self) -> &'static str {
        "Note"
    }
}

/// Another owned sink type, never taken back as a `Note`.
#[derive(Debug)]
struct Other;

impl OwnedSink<u32> for Other {
    fn deliver(self, _reply: u32) {}
}

#[test]
fn an_owned_sink_hears_once_or_is_taken_back_untold() {
    let log = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let note = || ReplyTo::<u32>::to_owned_sink(Note(Arc::clone(&log)));
    note().deliver(1);
    drop(note());
    note().fail(AskError::Timeout(None));
    let route = note();
    assert_eq!(format!("{route:?}"), "Note");
    let Ok(taken) = route.into_owned_sink::<Note>() else {
        panic!("a Note's route gives its Note back");
    };
    assert_eq!(log.lock().len(), 3, "taken back, nothing told");
    taken.deliver(2);
    let route = note().into_owned_sink::<Other>().expect_err("not an Other");
    route.deliver(3);
    assert!(ReplyTo::<u32>::nobody().into_owned_sink::<Note>().is_err());
    let (_ask, asked) = crate::reply::ask_pair::<u32>();
    let asked = asked.into_owned_sink::<Note>().expect_err("a slot");
    asked.deliver(4);
    assert!(ReplyTo::<u32>::to_owned_sink(Other)
        .into_owned_sink::<Other>()
        .is_ok());
    assert_eq!(
        *log.lock(),
        [
            "reply 1",
            "Dropped(None)",
            "Timeout(None)",
            "reply 2",
            "reply 3"
        ]
    );
    assert_eq!(Arc::strong_count(&log), 1, "every sink was freed");
}

#[test]
fn threads_making_a_sinks_first_route_at_once_share_one_port() {
    for _ in 0..if cfg!(miri) { 2 } else { 50 } {
        let log = Arc::new(Log::default());
        let threads: Vec<_> = (0..4u32)
            .map(|i| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || ReplyTo::<u32>::shared(&log).deliver(i))
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut heard = log.heard.lock().clone();
        heard.sort();
        assert_eq!(heard, ["u32 0", "u32 1", "u32 2", "u32 3"]);
        assert_eq!(log.ports.len(), 1);
        assert_eq!(Arc::strong_count(&log), 1);
    }
}
