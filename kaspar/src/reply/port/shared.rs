//! Shared ports: the ports a sink keeps for routes to itself, one per
//! reply type, in a list that only grows until the sink is dropped.

use std::any::TypeId;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use super::{Port, PortVTable};
use crate::base::sync::{AtomicPtr, Ordering};
use crate::error::AskError;
use crate::reply::ReplySink;

/// A sink that keeps ports for routes to itself.
///
/// # Safety
///
/// [`ports`](Self::ports) returns the same `Ports` every time, and it
/// lives exactly as long as `self` (a field of it): P2 rests on that.
/// And `self` is never moved out of the `Arc` it was routed through
/// (`Arc::try_unwrap` and the like): a port holds that `Arc`'s address.
/// An actor's cell never leaves its `Arc`.
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
