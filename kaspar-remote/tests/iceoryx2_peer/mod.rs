//! What the iceoryx2 tests share: re-launching the test binary as the peer
//! process, talking to it over its stdin and stdout with timeouts, and
//! transports in a namespace of their own.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use kaspar_remote::transport::iceoryx2::{Iceoryx2Config, Iceoryx2Transport};

/// Set in a re-launched child: which role it plays.
pub const ROLE: &str = "KASPAR_IOX2_TEST_ROLE";
/// Set in a re-launched child: the namespace the parent uses.
pub const NS: &str = "KASPAR_IOX2_TEST_NS";

/// The longest any single wait in these tests lasts.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The role this process plays, if it is a re-launched child.
pub fn role() -> Option<String> {
    std::env::var(ROLE).ok()
}

/// A namespace no other test (or test run) shares. Keep the guard alive
/// for the whole test.
pub fn fresh_namespace(tag: &str) -> Namespace {
    Namespace(format!("t{}_{tag}", std::process::id()))
}

/// A test's own iceoryx2 namespace. Dropping it removes the one file
/// iceoryx2 keeps per namespace on purpose (its 16-byte node counter,
/// `*.global_mgmt` in /dev/shm); anything else left behind is a leak and
/// stays visible.
pub struct Namespace(String);

impl Namespace {
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let prefix = format!("kaspar_{}_", self.0);
        let Ok(entries) = std::fs::read_dir("/dev/shm") else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(&prefix) && name.ends_with(".global_mgmt") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// The namespace handed down by the parent.
pub fn inherited_namespace() -> String {
    std::env::var(NS).expect("a child is given its parent's namespace")
}

pub fn transport(config: Iceoryx2Config) -> Iceoryx2Transport {
    Iceoryx2Transport::new(config).expect("an iceoryx2 transport")
}

/// The peer process: this test binary re-run on one test, in one role.
pub struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Peer {
    /// Re-launches this binary to run only `test` (which must dispatch on
    /// [`role`]) as `role` in namespace `ns`.
    pub fn spawn(test: &str, role: &str, ns: &str) -> Peer {
        let mut child = Command::new(std::env::current_exe().expect("the test binary's path"))
            .args([test, "--exact", "--nocapture", "--test-threads=1"])
            .env(ROLE, role)
            .env(NS, ns)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("re-launch the test binary");
        let stdout = child.stdout.take().expect("the child's stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    /// Waits (at most [`PATIENCE`]) for the child to [`tell`] a line that
    /// starts with `prefix`, and returns the rest of it. Other output (the
    /// test harness's own) is skipped.
    pub fn expect(&mut self, prefix: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let said = line.strip_prefix(MARK).and_then(|l| l.strip_prefix(prefix));
                    if let Some(rest) = said {
                        return rest.trim().to_owned();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    panic!("the peer did not say {prefix:?} within {PATIENCE:?}");
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait();
                    panic!("the peer ended ({status:?}) before saying {prefix:?}");
                }
            }
        }
    }

    /// Sends one line to the child's stdin.
    pub fn say(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the child's stdin is open");
        writeln!(stdin, "{line}").expect("write to the peer");
        stdin.flush().expect("flush to the peer");
    }

    /// Kills the child (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes the child's stdin and waits (at most [`PATIENCE`]) for it to
    /// exit successfully.
    pub fn finish(mut self) {
        self.stdin = None;
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.child.try_wait().expect("poll the peer") {
                Some(status) => {
                    assert!(status.success(), "the peer failed: {status}");
                    return;
                }
                None if Instant::now() >= deadline => {
                    self.kill();
                    panic!("the peer did not exit within {PATIENCE:?}");
                }
                None => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // A failed test never leaves its peer behind.
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// Marks the lines a child [`tell`]s, apart from the test harness's.
const MARK: &str = "@@";

/// In a child: tells the parent one line (see [`Peer::expect`]). It starts
/// a fresh line, because the harness leaves its "test ... " unterminated.
pub fn tell(line: &str) {
    println!("\n{MARK}{line}");
}

/// In a child: blocks until the parent writes a line (returned) or closes
/// stdin (`None`). The parent always does one or the other, or dies, which
/// closes it too.
pub fn heard() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

/// Polls `check` until it holds, at most `limit`; whether it did.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}
