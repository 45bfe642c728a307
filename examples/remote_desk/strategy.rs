//! A strategy process: looks up the book process's gateway, exports its
//! strategy for the book to stream to, and serves until its parent closes
//! its stdin (or kills it).

use std::time::Duration;

use kaspar::prelude::*;
use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport, Overflow};
use kaspar_remote::{Export, Node, SendPolicy};

use crate::desk::{Gateway, Strategy};
use crate::proc::{heard, tell};

/// `name` is "strategy-a" or "strategy-b".
pub fn run(ns: &str, name: &str) -> Result<(), String> {
    let (id, threshold) = match name {
        "strategy-a" => (0, 40),
        "strategy-b" => (1, 30),
        other => return Err(format!("no strategy {other:?}")),
    };
    // Market data into this process: when the inbox is full the oldest
    // update gives way to the newest (the book sends with DropOldest).
    let config = Iceoryx2Config::default()
        .namespace(ns)
        .inbox_depth(256)
        .overflow(Overflow::DropOldest);
    let transport = Iceoryx2Transport::new(config).map_err(|e| e.to_string())?;
    let node = Node::new(transport, &format!("desk/{name}")).map_err(|e| e.to_string())?;
    // Orders out of this process: wait a little for room, never forever.
    let gateway = node
        .lookup::<Gateway>("gateway")
        .map_err(|e| format!("look up the gateway: {e}"))?
        .with_policy(SendPolicy::Wait(Duration::from_millis(50)))
        .map_err(|e| e.to_string())?;
    println!("looked up \"gateway\" in {}", gateway.endpoint());

    let system = System::new();
    let strategy = system.spawn(Strategy::new(id, threshold, gateway)).start();
    // Short handlers: run them on the bridge thread as it takes each
    // frame (fast_send), no second hop through a mailbox.
    node.export_with(name, &strategy, Export::new().fast_send())
        .map_err(|e| e.to_string())?;
    println!("exported \"{name}\" (pid {})", std::process::id());
    tell("READY");

    while heard().is_some() {}
    let stats = node.stats();
    println!(
        "{name}: {} frames in, {} updates overwritten by newer ones (DropOldest, seen as sequence gaps)",
        stats.frames_in, stats.missed
    );
    drop(node);
    system.shutdown();
    Ok(())
}
