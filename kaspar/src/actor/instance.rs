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
    name: Name,
    /// The system that started the actor, type-erased (the system layer
    /// sits above this one and downcasts it back). Weak: the system holds
    /// its actors, so a strong link back would keep both alive. Dangling
    /// for an actor no system started (one in a `Simulation`).
    pub(crate) system: Weak<dyn Any + Send + Sync>,
}

/// An instance's name.
#[derive(Clone)]
enum Name {
    /// Given when the cell was made, for good: an actor spawned and
    /// started in one go, which is most of them. No shared slot is made.
    Fixed(Option<Arc<str>>),
    /// Set once, later but before it starts ([`Instance::set_name`]): a
    /// prepared actor, or a group. Shared by the clones.
    Late(Arc<OnceLock<Arc<str>>>),
}

impl Instance {
    /// An actor of `system` named (or not) for good.
    pub(crate) fn new(name: Option<Arc<str>>, system: Weak<dyn Any + Send + Sync>) -> Self {
        Instance {
            name: Name::Fixed(name),
            system,
        }
    }

    /// An actor or group of `system` that may be named later, once
    /// ([`set_name`](Self::set_name)); its clones share the name.
    pub(crate) fn late(name: Option<Arc<str>>, system: Weak<dyn Any + Send + Sync>) -> Self {
        Instance {
            name: Name::Late(Arc::new(name.map_or_else(OnceLock::new, OnceLock::from))),
            system,
        }
    }

    /// An unnamed actor that no system started (it may be named later).
    pub(crate) fn detached() -> Self {
        Instance::late(None, Weak::<()>::new())
    }

    /// The name given at spawn, if any.
    pub(crate) fn name(&self) -> Option<Arc<str>> {
        match &self.name {
            Name::Fixed(name) => name.clone(),
            Name::Late(slot) => slot.get().cloned(),
        }
    }

    /// The name given at spawn, if any, borrowed: no reference count
    /// touched (a span per handled message records it).
    #[cfg(feature = "tracing")]
    pub(crate) fn name_str(&self) -> Option<&str> {
        match &self.name {
            Name::Fixed(name) => name.as_deref(),
            Name::Late(slot) => slot.get().map(|n| &**n),
        }
    }

    /// Names an unnamed instance (and every clone of it): a prepared actor
    /// or group, before it starts. What was made from it before (a
    /// [`Target`](crate::Target) in an error, a dead letter) keeps showing
    /// it unnamed. `Err` with the name it has if it has one.
    ///
    /// # Panics
    ///
    /// If the instance was made by [`new`](Self::new): its name is fixed,
    /// and only prepared actors and groups are named later.
    pub(crate) fn set_name(&self, name: Arc<str>) -> Result<(), Arc<str>> {
        let Name::Late(slot) = &self.name else {
            panic!("kaspar: an actor spawned in one go cannot be named afterwards");
        };
        match slot.set(name) {
            Ok(()) => Ok(()),
            Err(_) => Err(slot.get().cloned().expect("a OnceLock that refused is set")),
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
        let named = Instance::late(Some("book".into()), Weak::<()>::new());
        assert!(named.set_name("again".into()).is_err());
        assert_eq!(named.name().as_deref(), Some("book"));
        let fixed = Instance::new(Some("gateway".into()), Weak::<()>::new());
        assert_eq!(fixed.clone().name().as_deref(), Some("gateway"));
        assert_eq!(Instance::new(None, Weak::<()>::new()).name(), None);
    }
}
