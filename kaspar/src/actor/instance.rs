//! What one actor knows about itself beyond its type: the name it was given
//! at spawn, and the system it runs in (so a handler can spawn into it).

use std::any::Any;
use std::sync::{Arc, Weak};

/// Set once, when the cell is made; read only off the delivery paths
/// (errors, dead letters, stats, `Debug`, `Ctx::spawn`). A group's members
/// share one, cloned.
#[derive(Clone)]
pub(crate) struct Instance {
    /// The name given at spawn (a group member's: its group's), if any.
    pub(crate) name: Option<Arc<str>>,
    /// The system that started the actor, type-erased (the system layer
    /// sits above this one and downcasts it back). Weak: the system holds
    /// its actors, so a strong link back would keep both alive. Dangling
    /// for an actor no system started (one in a `Simulation`).
    pub(crate) system: Weak<dyn Any + Send + Sync>,
}

impl Instance {
    /// A named or unnamed actor of `system`.
    pub(crate) fn new(name: Option<Arc<str>>, system: Weak<dyn Any + Send + Sync>) -> Self {
        Instance { name, system }
    }

    /// An unnamed actor that no system started.
    pub(crate) fn detached() -> Self {
        Instance {
            name: None,
            system: Weak::<()>::new(),
        }
    }
}
