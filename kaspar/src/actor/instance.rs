//! What one actor knows about itself beyond its type: the name it was given
//! at spawn, and the system it runs in (so a handler can spawn into it).

use std::any::Any;
use std::sync::{Arc, OnceLock, Weak};

/// Made with the cell; read only off the delivery paths (errors, dead
/// letters, stats, `Debug`, `Ctx::spawn`). A group's members share one,
/// cloned: a clone shares the name, so naming one names them all.
#[derive(Clone)]
pub(crate) struct Instance {
    /// The name given at spawn (a group member's: its group's), if any.
    /// Set once: when the cell is made, or, for a prepared actor or group,
    /// later but before it starts ([`set_name`](Self::set_name)). Shared by
    /// the clones.
    name: Arc<OnceLock<Arc<str>>>,
    /// The system that started the actor, type-erased (the system layer
    /// sits above this one and downcasts it back). Weak: the system holds
    /// its actors, so a strong link back would keep both alive. Dangling
    /// for an actor no system started (one in a `Simulation`).
    pub(crate) system: Weak<dyn Any + Send + Sync>,
}

impl Instance {
    /// A named or unnamed actor of `system`.
    pub(crate) fn new(name: Option<Arc<str>>, system: Weak<dyn Any + Send + Sync>) -> Self {
        Instance {
            name: Arc::new(name.map_or_else(OnceLock::new, OnceLock::from)),
            system,
        }
    }

    /// An unnamed actor that no system started.
    pub(crate) fn detached() -> Self {
        Instance::new(None, Weak::<()>::new())
    }

    /// The name given at spawn, if any.
    pub(crate) fn name(&self) -> Option<Arc<str>> {
        self.name.get().cloned()
    }

    /// The name given at spawn, if any, borrowed: no reference count
    /// touched (a span per handled message records it).
    #[cfg(feature = "tracing")]
    pub(crate) fn name_str(&self) -> Option<&str> {
        self.name.get().map(|n| &**n)
    }

    /// Names an unnamed instance (and every clone of it): a prepared actor
    /// or group, before it starts. What was made from it before (a
    /// [`Target`](crate::Target) in an error, a dead letter) keeps showing
    /// it unnamed. `Err` with the name it has if it has one.
    pub(crate) fn set_name(&self, name: Arc<str>) -> Result<(), Arc<str>> {
        match self.name.set(name) {
            Ok(()) => Ok(()),
            Err(_) => Err(self
                .name
                .get()
                .cloned()
                .expect("a OnceLock that refused is set")),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_set_once_and_shared_by_the_clones() {
        let a = Instance::detached();
        let b = a.clone();
        assert_eq!(a.name(), None);
        assert_eq!(b.set_name("desk".into()), Ok(()));
        assert_eq!(a.name().as_deref(), Some("desk"));
        assert_eq!(a.set_name("other".into()).unwrap_err().as_ref(), "desk");
        assert_eq!(b.name().as_deref(), Some("desk"));
        let named = Instance::new(Some("book".into()), Weak::<()>::new());
        assert!(named.set_name("again".into()).is_err());
        assert_eq!(named.name().as_deref(), Some("book"));
    }
}
