//! Thread placement through the spawn builders: applied by the thread
//! before any hook, reported, and never fatal when the OS refuses.

use kaspar::prelude::*;
use kaspar::Placement;

pub struct Ping;

#[actor]
pub struct Pinned;

#[actor]
impl Pinned {
    #[handler(Ping)]
    fn ping(&mut self, _msg: Ping, _ctx: &mut Ctx<Self>) -> u32 {
        7
    }
}

#[group]
pub struct Solo {
    pub pinned: Addr<Pinned>,
}

#[test]
fn a_refused_placement_is_reported_and_the_actor_still_runs() {
    let system = System::new();
    let impossible = Placement::new().pin(1 << 20);
    let (addr, outcome) = system
        .spawn(Pinned)
        .placement(impossible.clone())
        .start_placed();
    assert!(!outcome.is_ok(), "{outcome}");
    assert!(matches!(outcome.affinity, Some(Err(_))));
    assert_eq!(addr.ask(Ping).unwrap().wait().unwrap(), 7);

    let (group, outcome) = system
        .spawn_group::<Solo>((Pinned,))
        .placement(impossible)
        .start_placed();
    assert!(!outcome.is_ok());
    assert_eq!(group.pinned.ask(Ping).unwrap().wait().unwrap(), 7);
}

#[test]
#[cfg(target_os = "linux")]
fn pinning_to_every_allowed_cpu_applies() {
    // A set that contains every CPU this process may use is a placement
    // the OS accepts (a container may allow only some CPU numbers).
    let system = System::new();
    let (_addr, outcome) = system
        .spawn(Pinned)
        .placement(Placement::new().cpus(0..1024))
        .start_placed();
    assert!(matches!(outcome.affinity, Some(Ok(()))), "{outcome}");
}
