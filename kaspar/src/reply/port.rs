//! Ports: a reply destination behind a thin pointer.
//!
//! A [`Route`](super::route::Route) is one word, so a destination that is
//! not an asker's slot must be reachable through one thin pointer, while a
//! `dyn ReplySink<R>` is a fat one. A [`Port`] is the header such a
//! destination starts with: a pointer to its vtable, which knows the rest
//! of the object. Two kinds exist:
//!
//! * **Owned** ([`owned`]): a box holding an [`OwnedSink`], made for one
//!   route and freed by it (kaspar-remote's wire sink, made per message
//!   anyway, or any `Arc<dyn ReplySink<R>>`).
//! * **Shared** ([`shared`]): a port kept by the sink itself, in its
//!   [`Ports`], one per reply type, made the first time a route to that
//!   sink for that type is asked for and freed with the sink. A route to it
//!   holds one strong count of the sink's `Arc`. An actor's cell is such a
//!   sink, so a `request` allocates nothing once its reply type has been
//!   routed to that actor before.
//!
//! # The contract a route relies on
//!
//! - **P1**: a route built by [`owned`] or [`shared`] owns one *route
//!   reference* of its port; exactly one of the vtable's `deliver` or
//!   `unanswered` consumes it, once.
//! - **P2**: a port is alive while a route reference to it exists: an
//!   owned port is freed only by consuming its reference, and a shared
//!   port lives in its sink's `Ports`, which live as long as the sink,
//!   which the route's strong count keeps alive.
//! - **P3**: a port's vtable is for the port's real type: a node of
//!   `Ports` is found by the `TypeId` of that type, an owned port's vtable
//!   is set where the box is made, and [`take_owned`] compares the
//!   `TypeId` the vtable names before it takes the sink out.

use std::any::TypeId;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use super::ReplySink;
use crate::base::sync::{AtomicPtr, Ordering};
use crate::error::AskError;

/// The header of every port: the route reaches the rest through it.
#[repr(C)]
pub(crate) struct Port<R> {
    /// A `&'static` in effect (the vtables are constants), kept raw so
    /// that `Port<R>` needs no `R: 'static`.
    vtable: *const PortVTable<R>,
}

/// What a route can do with a port. Each function takes the route
/// reference (P1).
pub(crate) struct PortVTable<R> {
    deliver: unsafe fn(NonNull<Port<R>>, R),
    unanswered: unsafe fn(NonNull<Port<R>>, AskError),
    kind: unsafe fn(NonNull<Port<R>>) -> &'static str,
    /// The port's own type (`Owned<R, T>` or `Shared<T, R>`), for
    /// [`take_owned`].
    is: fn() -> TypeId,
}

impl<R> Port<R> {
    /// Hands `reply` to the port's sink.
    ///
    /// # Safety
    ///
    /// `port` is alive and the caller gives up its route reference (P1).
    #[inline]
    pub(crate) unsafe fn deliver(port: NonNull<Self>, reply: R) {
        // SAFETY: alive by the caller's contract (P2); its vtable is for
        // its type (P3), and the reference is handed on.
        unsafe { ((*port.as_ref().vtable).deliver)(port, reply) }
    }

    /// Tells the port's sink that no reply comes, and why.
    ///
    /// # Safety
    ///
    /// As for [`deliver`](Self::deliver).
    pub(crate) unsafe fn unanswered(port: NonNull<Self>, why: AskError) {
        // SAFETY: as in `deliver`.
        unsafe { ((*port.as_ref().vtable).unanswered)(port, why) }
    }

    /// How `Debug` shows a route to this port.
    ///
    /// # Safety
    ///
    /// `port` is alive; the caller keeps its reference.
    pub(crate) unsafe fn kind(port: NonNull<Self>) -> &'static str {
        // SAFETY: as in `deliver`, and `kind` only reads.
        unsafe { ((*port.as_ref().vtable).kind)(port) }
    }
}

/// A reply destination made for one route and moved into the route's own
/// allocation (kaspar-remote's wire sink: one allocation per queued remote
/// ask, the sink and its port together). Dropped without a reply, the
/// route calls [`unanswered`](Self::unanswered).
pub trait OwnedSink<R>: Send + 'static {
    /// Takes the handler's reply.
    fn deliver(self, reply: R);

    /// The route is dropped without a reply, and `why`. By default the
    /// sink is dropped (it may report the loss from its own `Drop`).
    fn unanswered(self, why: AskError)
    where
        Self: Sized,
    {
        let _ = why;
    }

    /// How `Debug` shows a route to this sink.
    fn kind(&self) -> &'static str {
        "ReplyTo::Actor"
    }
}

/// A shared sink as an owned one: the route holds one reference.
impl<R: 'static> OwnedSink<R> for Arc<dyn ReplySink<R>> {
    fn deliver(self, reply: R) {
        ReplySink::deliver(self, reply);
    }

    fn unanswered(self, why: AskError) {
        ReplySink::unanswered(self, why);
    }

    fn kind(&self) -> &'static str {
        ReplySink::kind(&**self)
    }
}

/// An owned port: the header and the sink, in one box.
#[repr(C)]
struct Owned<R, T> {
    port: Port<R>,
    sink: T,
}

impl<R: 'static, T: OwnedSink<R>> Owned<R, T> {
    const VTABLE: PortVTable<R> = PortVTable {
        deliver: Self::deliver,
        unanswered: Self::unanswered,
        kind: Self::kind,
        is: TypeId::of::<Self>,
    };

    /// # Safety
    ///
    /// `port` is an `Owned<R, T>`'s (made by [`owned`], P3) and its
    /// reference is the caller's.
    unsafe fn take(port: NonNull<Port<R>>) -> T {
        // SAFETY: `owned` made this pointer from a `Box<Owned<R, T>>`
        // whose first field is the port (`repr(C)`), and this is its one
        // route reference (P1), so the box is ours to free.
        let owned = unsafe { Box::from_raw(port.cast::<Self>().as_ptr()) };
        owned.sink
    }

    unsafe fn deliver(port: NonNull<Port<R>>, reply: R) {
        // SAFETY: passed on from `Port::deliver`.
        unsafe { Self::take(port) }.deliver(reply);
    }

    unsafe fn unanswered(port: NonNull<Port<R>>, why: AskError) {
        // SAFETY: passed on from `Port::unanswered`.
        unsafe { Self::take(port) }.unanswered(why);
    }

    unsafe fn kind(port: NonNull<Port<R>>) -> &'static str {
        // SAFETY: as in `take`, only borrowed.
        unsafe { port.cast::<Self>().as_ref() }.sink.kind()
    }
}

/// A port that owns `sink`, for one route (P1): the route frees it.
pub(crate) fn owned<R: 'static, T: OwnedSink<R>>(sink: T) -> NonNull<Port<R>> {
    let owned = Box::new(Owned {
        port: Port {
            vtable: &Owned::<R, T>::VTABLE,
        },
        sink,
    });
    NonNull::from(Box::leak(owned)).cast()
}

/// The sink behind `port` if it is an owned `T`, taking the route's
/// reference; otherwise `port` is handed back untouched.
///
/// # Safety
///
/// `port` is alive and its route reference is the caller's (P1).
pub(crate) unsafe fn take_owned<R: 'static, T: OwnedSink<R>>(
    port: NonNull<Port<R>>,
) -> Result<T, NonNull<Port<R>>> {
    // SAFETY: alive by the caller's contract; its vtable is its type's (P3).
    let is = unsafe { ((*port.as_ref().vtable).is)() };
    if is == TypeId::of::<Owned<R, T>>() {
        // SAFETY: the port is an `Owned<R, T>`, and the reference is ours.
        Ok(unsafe { Owned::<R, T>::take(port) })
    } else {
        Err(port)
    }
}

/// A sink that keeps ports for routes to itself.
///
/// # Safety
///
/// [`ports`](Self::ports) returns the same `Ports` every time, and it
/// lives exactly as long as `self` (a field of it): P2 rests on that.
pub(crate) unsafe trait HasPorts {
    fn ports(&self) -> &Ports;
}

/// The ports a sink keeps, one per reply type: a list that only grows
/// (by compare-and-swap at its head) until the sink is dropped.
#[derive(Debug)]
pub(crate) struct Ports {
    head: AtomicPtr<NodeHead>,
}

/// What every node starts with: its key and how to free it.
#[repr(C)]
struct NodeHead {
    /// `TypeId` of the node's `Shared<T, R>` (P3).
    key: TypeId,
    next: *mut NodeHead,
    free: unsafe fn(*mut NodeHead),
}

/// A node: its head, then the port.
#[repr(C)]
struct Node<T, R> {
    head: NodeHead,
    port: Shared<T, R>,
}

/// A shared port: the header and the sink that keeps it.
#[repr(C)]
struct Shared<T, R> {
    port: Port<R>,
    /// The sink: `Arc::as_ptr` of it.
    sink: *const T,
}

impl<T: ReplySink<R> + 'static, R: 'static> Shared<T, R> {
    const VTABLE: PortVTable<R> = PortVTable {
        deliver: Self::deliver,
        unanswered: Self::unanswered,
        kind: Self::kind,
        is: TypeId::of::<Self>,
    };

    /// # Safety
    ///
    /// `port` is a `Shared<T, R>`'s and its route reference is the
    /// caller's: one strong count of the sink.
    unsafe fn take(port: NonNull<Port<R>>) -> Arc<T> {
        // SAFETY: the port is alive (P2) and a `Shared<T, R>` (P3, its
        // first field is the header); the strong count is the route's, so
        // the `Arc` rebuilt here owns it. The port is not touched after.
        unsafe { Arc::from_raw(port.cast::<Self>().as_ref().sink) }
    }

    unsafe fn deliver(port: NonNull<Port<R>>, reply: R) {
        // SAFETY: passed on from `Port::deliver`.
        unsafe { Self::take(port) }.deliver(reply);
    }

    unsafe fn unanswered(port: NonNull<Port<R>>, why: AskError) {
        // SAFETY: passed on from `Port::unanswered`.
        unsafe { Self::take(port) }.unanswered(why);
    }

    unsafe fn kind(port: NonNull<Port<R>>) -> &'static str {
        // SAFETY: as in `take`; the strong count stays the route's.
        unsafe { (*port.cast::<Self>().as_ref().sink).kind() }
    }
}

impl<T, R> Node<T, R> {
    unsafe fn free(head: *mut NodeHead) {
        // SAFETY: `Ports::drop` calls this once per node, with the pointer
        // `shared` made from this type's box (P3).
        drop(unsafe { Box::from_raw(head.cast::<Self>()) });
    }
}

impl Default for Ports {
    fn default() -> Self {
        Self::new()
    }
}

impl Ports {
    pub(crate) fn new() -> Self {
        Ports {
            head: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The node keyed `key` in the list from `at`, if any.
    #[inline]
    fn find(mut at: *mut NodeHead, key: TypeId) -> Option<NonNull<NodeHead>> {
        while let Some(node) = NonNull::new(at) {
            // SAFETY: a node in the list lives until the list is dropped,
            // and its head is never written after it was published (the
            // release of its compare-and-swap, acquired by our load).
            let head = unsafe { node.as_ref() };
            if head.key == key {
                return Some(node);
            }
            at = head.next;
        }
        None
    }
}

impl Drop for Ports {
    fn drop(&mut self) {
        let mut at = self.head.load(Ordering::Acquire);
        while let Some(node) = NonNull::new(at) {
            // SAFETY: `&mut self`: no route reaches this list any more (P2),
            // and each node is freed once, by its own type's `free`.
            unsafe {
                at = node.as_ref().next;
                (node.as_ref().free)(node.as_ptr());
            }
        }
    }
}

/// A port for replies of type `R` to `sink`, made on first use and kept in
/// its `Ports`; the route's reference is one new strong count (P1).
#[inline]
pub(crate) fn shared<T, R>(sink: &Arc<T>) -> NonNull<Port<R>>
where
    T: ReplySink<R> + HasPorts + 'static,
    R: 'static,
{
    let key = TypeId::of::<Shared<T, R>>();
    let seen = sink.ports().head.load(Ordering::Acquire);
    let node = match Ports::find(seen, key) {
        Some(node) => node,
        None => push::<T, R>(sink, seen, key),
    };
    // The route's strong count (P1, P2).
    let _ = Arc::into_raw(Arc::clone(sink));
    let node = node.cast::<Node<T, R>>().as_ptr();
    // SAFETY: a node keyed by `Shared<T, R>` is a `Node<T, R>` (P3). A raw
    // projection, not a reference: the port's pointer must reach the
    // whole `Shared` behind its header.
    unsafe { NonNull::new_unchecked(ptr::addr_of_mut!((*node).port.port)) }
}

/// [`shared`]'s first route for `R`: makes the port and pushes it, unless
/// a racing route pushed one for `R` first. `seen` is the head that had
/// no port for `R`.
#[cold]
#[inline(never)]
fn push<T, R>(sink: &Arc<T>, mut seen: *mut NodeHead, key: TypeId) -> NonNull<NodeHead>
where
    T: ReplySink<R> + HasPorts + 'static,
    R: 'static,
{
    let made = NonNull::from(Box::leak(Box::new(Node::<T, R> {
        head: NodeHead {
            key,
            next: seen,
            free: Node::<T, R>::free,
        },
        port: Shared {
            port: Port {
                vtable: &Shared::<T, R>::VTABLE,
            },
            sink: Arc::as_ptr(sink),
        },
    })));
    let at = made.cast::<NodeHead>();
    let head = &sink.ports().head;
    loop {
        match head.compare_exchange(seen, at.as_ptr(), Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return at,
            Err(now) => {
                // Another route pushed first: it may be this type's.
                if let Some(node) = Ports::find(now, key) {
                    // SAFETY: never published, so ours alone.
                    drop(unsafe { Box::from_raw(made.as_ptr()) });
                    return node;
                }
                seen = now;
                // SAFETY: as above: not yet published.
                unsafe { (*made.as_ptr()).head.next = now };
            }
        }
    }
}

impl Ports {
    /// How many ports the list holds.
    #[cfg(any(test, loom))]
    pub(crate) fn len(&self) -> usize {
        let mut n = 0;
        let mut at = self.head.load(Ordering::Acquire);
        while let Some(node) = NonNull::new(at) {
            n += 1;
            // SAFETY: as in `find`.
            at = unsafe { node.as_ref().next };
        }
        n
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::reply::ReplyTo;

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
}
