//! A network namespace of the test's own, for multicast that never
//! touches a real interface.

use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// A network namespace with multicast on its loopback (and a 224.0.0.0/4
/// route on it); deleted when dropped.
pub struct Namespace(String);

impl Namespace {
    /// Creates a namespace with multicast on its loopback, or says why not.
    pub fn create() -> Result<Namespace, String> {
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("kaspar-aeron-{}-{stamp}", std::process::id());
        ip(&["netns", "add", &name])?;
        let ns = Namespace(name);
        ns.exec(&["ip", "link", "set", "lo", "up"])?;
        ns.exec(&["ip", "link", "set", "lo", "multicast", "on"])?;
        ns.exec(&["ip", "route", "add", "224.0.0.0/4", "dev", "lo"])?;
        Ok(ns)
    }

    fn exec(&self, command: &[&str]) -> Result<(), String> {
        let mut args = vec!["netns", "exec", &self.0];
        args.extend_from_slice(command);
        ip(&args)
    }

    /// `ip netns exec <ns> <this test binary>`, for [`Peer::spawn_with`](super::Peer::spawn_with).
    pub fn command(&self) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.0])
            .arg(std::env::current_exe().unwrap());
        command
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = ip(&["netns", "delete", &self.0]);
    }
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip`: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
