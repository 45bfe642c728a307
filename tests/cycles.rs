//! Call-chain cycle detection and the cycle policies (paper §7.3).
//!
//! Every refused call here would otherwise deadlock on a lock its own
//! thread holds, so a test that returns at all shows the check ran before
//! any lock was touched.

use std::cell::Cell;

use kaspar::prelude::*;

// ---- a conservative ping-pong of ordinary (`&mut self`) actors ----------

pub struct Bounce {
    pub to: Option<Addr<Left>>,
}
pub struct Start {
    pub right: Addr<Right>,
}

#[actor]
pub struct Left;

#[actor]
impl Left {
    #[handler(Start)]
    fn on_start(&mut self, msg: Start, ctx: &mut Ctx<Self>) -> String {
        match msg.right.fast_send(Bounce {
            to: Some(ctx.myself()),
        }) {
            Ok(inner) => inner,
            Err(e) => format!("outer: {e}"),
        }
    }

    #[handler(Bounce)]
    fn on_bounce(&mut self, _msg: Bounce, _ctx: &mut Ctx<Self>) -> String {
        "left re-entered".to_string()
    }
}

#[actor]
pub struct Right;

#[actor]
impl Right {
    #[handler(Bounce)]
    fn on_bounce(&mut self, msg: Bounce, _ctx: &mut Ctx<Self>) -> String {
        let left = msg.to.expect("test sends a target");
        match left.fast_send(Bounce { to: None }) {
            Ok(s) => s,
            Err(e) => {
                assert!(e.is_cycle(), "{e:?}");
                let FastSendError::Cycle { target, chain, msg } = e else {
                    unreachable!()
                };
                assert!(msg.to.is_none(), "the message comes back");
                assert_eq!(target.id, left.id());
                format!("cycle at {} via {}", target.name, chain)
            }
        }
    }
}

#[test]
fn re_entering_an_ordinary_actor_is_a_cycle_under_every_policy() {
    for policy in [CyclePolicy::Conservative, CyclePolicy::Permissive] {
        // A system-wide default applies to the actors that can use it; for
        // `&mut self` actors like these it changes nothing.
        let system = System::with_config(kaspar::SystemConfig {
            policy,
            ..Default::default()
        });
        let left = system.spawn(Left).start();
        let right = system.spawn(Right).start();
        let out = left.fast_send(Start { right }).unwrap();
        // Left/Start -> Right/Bounce -> Left/Bounce: a different class of
        // Left, still refused, because Left's handlers take `&mut self`.
        assert!(out.starts_with("cycle at Left via Left#"), "{out}");
        assert!(out.contains("/Start -> Right#"), "{out}");
        assert!(out.ends_with("/Bounce"), "{out}");
        assert_eq!(left.stats().cycles, 1);
    }
}

// ---- the paper's callback pattern, on a reentrant actor ----------------

pub struct Compute {
    pub validator: Addr<Validator>,
}
pub struct Validate {
    pub back: Addr<Pricer>,
}
pub struct Validated;
pub struct Foo {
    pub via: Addr<Validator>,
}
pub struct Bar {
    pub back: Addr<Pricer>,
    pub via: Addr<Validator>,
}
/// `Compute`, with the callback made under a per-call policy.
pub struct ComputeWith {
    pub validator: Addr<Validator>,
    pub policy: CyclePolicy,
}
/// `Validate`, calling back under `policy` (`Addr::with_policy`).
pub struct ValidateWith {
    pub back: Addr<Pricer>,
    pub policy: CyclePolicy,
}

#[actor(reentrant)]
pub struct Pricer {
    validated: Cell<u32>,
}

#[actor]
impl Pricer {
    #[handler(Compute)]
    fn compute(&self, msg: Compute, ctx: &mut Ctx<Self>) -> Result<u32, String> {
        let back = ctx.myself();
        msg.validator
            .fast_send(Validate { back })
            .map_err(|e| e.to_string())??;
        Ok(self.validated.get())
    }

    #[handler(Validated)]
    fn validated(&self, _msg: Validated, _ctx: &mut Ctx<Self>) {
        self.validated.set(self.validated.get() + 1);
    }

    #[handler(ComputeWith)]
    fn compute_with(&self, msg: ComputeWith, ctx: &mut Ctx<Self>) -> Result<u32, String> {
        let back = ctx.myself();
        msg.validator
            .fast_send(ValidateWith {
                back,
                policy: msg.policy,
            })
            .map_err(|e| e.to_string())??;
        Ok(self.validated.get())
    }

    #[handler(Foo)]
    fn foo(&self, msg: Foo, ctx: &mut Ctx<Self>) -> Result<(), String> {
        let bar = Bar {
            back: ctx.myself(),
            via: msg.via.clone(),
        };
        msg.via.fast_send(bar).map_err(|e| e.to_string())?
    }
}

#[actor]
pub struct Validator;

#[actor]
impl Validator {
    #[handler(Validate)]
    fn validate(&mut self, msg: Validate, _ctx: &mut Ctx<Self>) -> Result<(), String> {
        msg.back.fast_send(Validated).map_err(|e| e.to_string())
    }

    #[handler(ValidateWith)]
    fn validate_with(&mut self, msg: ValidateWith, _ctx: &mut Ctx<Self>) -> Result<(), String> {
        msg.back
            .with_policy(msg.policy)
            .fast_send(Validated)
            .map_err(|e| e.to_string())
    }

    #[handler(Bar)]
    fn bar(&mut self, msg: Bar, _ctx: &mut Ctx<Self>) -> Result<(), String> {
        match msg.back.fast_send(Foo { via: msg.via }) {
            Ok(inner) => inner,
            Err(e) if e.is_cycle() => Err(format!("refused: {e}")),
            Err(e) => Err(format!("unexpected: {e}")),
        }
    }
}

fn pricing(policy: Option<CyclePolicy>) -> (System, Addr<Pricer>, Addr<Validator>) {
    let system = match policy {
        Some(p) => System::with_config(kaspar::SystemConfig {
            policy: p,
            ..Default::default()
        }),
        None => System::new(),
    };
    let pricer = system
        .spawn(Pricer {
            validated: Cell::new(0),
        })
        .start();
    let validator = system.spawn(Validator).start();
    (system, pricer, validator)
}

#[test]
fn permissive_admits_a_callback_to_a_different_handler() {
    let (_s, pricer, validator) = pricing(Some(CyclePolicy::Permissive));
    // Pricer/Compute -> Validator/Validate -> Pricer/Validated
    assert_eq!(pricer.fast_send(Compute { validator }).unwrap(), Ok(1));
}

#[test]
fn conservative_is_the_default_and_refuses_the_callback() {
    let (_s, pricer, validator) = pricing(None);
    let out = pricer.fast_send(Compute { validator }).unwrap();
    let err = out.unwrap_err();
    assert!(err.contains("synchronous cycle: Pricer"), "{err}");
    assert_eq!(pricer.stats().cycles, 1);
}

#[test]
fn a_repeated_pair_is_refused_under_both_policies() {
    for policy in [CyclePolicy::Conservative, CyclePolicy::Permissive] {
        let (_s, pricer, validator) = pricing(Some(policy));
        // Pricer/Foo -> Validator/Bar -> Pricer/Foo
        let err = pricer
            .fast_send(Foo { via: validator })
            .unwrap()
            .unwrap_err();
        assert!(
            err.starts_with("refused: synchronous cycle: Pricer"),
            "{policy:?}: {err}"
        );
        assert!(err.contains("/Foo -> Validator#"), "{err}");
    }
}

#[test]
fn per_actor_and_per_call_policies_override_the_system() {
    // per actor: the system says conservative, the actor says permissive
    let system = System::new();
    let pricer = system
        .spawn(Pricer {
            validated: Cell::new(0),
        })
        .policy(CyclePolicy::Permissive)
        .start();
    let validator = system.spawn(Validator).start();
    assert_eq!(
        pricer
            .fast_send(Compute {
                validator: validator.clone()
            })
            .unwrap(),
        Ok(1)
    );

    // per call: the policy of the call that would re-enter decides. The
    // callback runs inside Pricer/ComputeWith, so it is a real re-entry.
    let strict = system
        .spawn(Pricer {
            validated: Cell::new(0),
        })
        .start();
    let relaxed = strict
        .fast_send(ComputeWith {
            validator: validator.clone(),
            policy: CyclePolicy::Permissive,
        })
        .unwrap();
    assert_eq!(
        relaxed,
        Ok(1),
        "a permissive callback on a conservative actor"
    );
    let refused = pricer
        .fast_send(ComputeWith {
            validator: validator.clone(),
            policy: CyclePolicy::Conservative,
        })
        .unwrap()
        .unwrap_err();
    assert!(
        refused.starts_with("synchronous cycle: Pricer"),
        "a conservative callback on a permissive actor: {refused}"
    );
    assert!(strict.fast_send(Compute { validator }).unwrap().is_err());
}

#[test]
#[should_panic(
    expected = "CyclePolicy::Permissive asked for `Left`, which is not #[actor(reentrant)]"
)]
fn permissive_at_spawn_on_an_actor_that_cannot_re_enter_is_refused_loudly() {
    let system = System::new();
    let _ = system.spawn(Left).policy(CyclePolicy::Permissive);
}

#[test]
#[should_panic(
    expected = "CyclePolicy::Permissive asked for `Left`, which is not #[actor(reentrant)]"
)]
fn permissive_per_call_on_an_actor_that_cannot_re_enter_is_refused_loudly() {
    let system = System::new();
    let left = system.spawn(Left).start();
    let _ = left.with_policy(CyclePolicy::Permissive);
}

#[test]
fn the_policy_can_be_declared_on_the_actor() {
    #[actor(reentrant, policy = permissive)]
    pub struct Declared {
        n: Cell<u32>,
    }
    pub struct Outer;
    pub struct InnerMsg;
    #[actor]
    impl Declared {
        #[handler(Outer)]
        fn outer(&self, _m: Outer, ctx: &mut Ctx<Self>) -> u32 {
            ctx.myself().fast_send(InnerMsg).unwrap();
            // the same class again is still refused
            assert!(ctx.myself().fast_send(Outer).unwrap_err().is_cycle());
            self.n.get()
        }
        #[handler(InnerMsg)]
        fn inner(&self, _m: InnerMsg, _ctx: &mut Ctx<Self>) {
            self.n.set(self.n.get() + 1);
        }
    }
    let system = System::new();
    let d = system.spawn(Declared { n: Cell::new(0) }).start();
    assert_eq!(d.fast_send(Outer).unwrap(), 1);
    // and the run loop seeds the chain the same way for queued messages
    assert_eq!(d.ask(Outer).unwrap().wait().unwrap(), 2);
}
