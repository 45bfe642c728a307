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

/// An instance's name: none for an actor spawned unnamed in one go, which
/// is most of them (nothing allocated), else a slot its clones share. One
/// word: every actor's cell holds one, and an enum of "fixed" (a fat
/// `Arc<str>`) and "late" took three.
#[derive(Clone)]
struct Name(Option<Arc<NameSlot>>);

struct NameSlot {
    /// Whether it may be named later, once ([`Instance::set_name`]): a
    /// prepared actor, or a group. Otherwise it was named when the cell
    /// was made, for good.
    late: bool,
    name: OnceLock<Arc<str>>,
}

impl Name {
    fn slot(late: bool, name: Option<Arc<str>>) -> Self {
        Name(Some(Arc::new(NameSlot {
            late,
            name: name.map_or_else(OnceLock::new, OnceLock::from),
        })))
    }

    fn get(&self) -> Option<&Arc<str>> {
        self.0.as_ref()?.name.get()
    }
}

impl Instance {
    /// An actor of `system` named (or not) for good.
    pub(crate) fn new(name: Option<Arc<str>>, system: Weak<dyn Any + Send + Sync>) -> Self {
        Instance {
            name: match name {
                Some(name) => Name::slot(false, Some(name)),
                None => Name(None),
            },
            system,
        }
    }

    /// An actor or group of `system` that may be named later, once
    /// ([`set_name`](Self::set_name)); its clones share the name.
    pub(crate) fn late(name: Option<Arc<str>>, system: Weak<dyn Any + Send + Sync>) -> Self {
        Instance {
            name: Name::slot(true, name),
            system,
        }
    }

    /// An unnamed actor that no system started (it may be named later).
    pub(crate) fn detached() -> Self {
        Instance::late(None, Weak::<()>::new())
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
    ///
    /// # Panics
    ///
    /// If the instance was made by [`new`](Self::new): its name is fixed,
    /// and only prepared actors and groups are named later.
    pub(crate) fn set_name(&self, name: Arc<str>) -> Result<(), Arc<str>> {
        let Some(slot) = self.name.0.as_ref().filter(|s| s.late) else {
            panic!("kaspar: an actor spawned in one go cannot be named afterwards");
        };
        match slot.name.set(name) {
            Ok(()) => Ok(()),
            Err(_) => Err(slot
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
        let named = Instance::late(Some("book".into()), Weak::<()>::new());
        assert!(named.set_name("again".into()).is_err());
        assert_eq!(named.name().as_deref(), Some("book"));
        let fixed = Instance::new(Some("gateway".into()), Weak::<()>::new());
        assert_eq!(fixed.clone().name().as_deref(), Some("gateway"));
        assert_eq!(Instance::new(None, Weak::<()>::new()).name(), None);
    }

    #[test]
    #[should_panic(expected = "cannot be named afterwards")]
    fn an_instance_named_for_good_is_not_named_again() {
        let _ = Instance::new(Some("gateway".into()), Weak::<()>::new()).set_name("x".into());
    }

    #[test]
    #[should_panic(expected = "cannot be named afterwards")]
    fn an_instance_unnamed_for_good_is_not_named_later() {
        let _ = Instance::new(None, Weak::<()>::new()).set_name("x".into());
    }

    /// Every actor's cell holds one: its name is one word.
    #[test]
    fn it_is_three_words() {
        assert_eq!(
            std::mem::size_of::<Instance>(),
            3 * std::mem::size_of::<usize>()
        );
    }
}
