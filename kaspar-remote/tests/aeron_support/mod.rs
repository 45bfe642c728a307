//! Shared by the Aeron tests: re-launching this test binary as the peer
//! process, and waiting on it with deadlines so that nothing hangs.
//!
//! A test that needs a peer spawns `current_exe() --exact <its own name>`
//! with [`ROLE`] set; in the child the same test function sees the role and
//! plays the peer instead. The child's stdout is read line by line on a
//! thread, so the parent can wait for "ready" with a timeout.

#![allow(dead_code)]

mod netns;

#[allow(unused_imports)] // Only the multicast tests use it.
pub use netns::Namespace;

use std::io::{BufRead, BufReader, Write};
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use kaspar_remote::transport::aeron::{AeronConfig, AeronTransport};

/// The environment variable that makes a test play a peer.
pub const ROLE: &str = "KASPAR_AERON_TEST_ROLE";
/// The parent's media driver directory, for peers that share it (IPC).
pub const DIR: &str = "KASPAR_AERON_TEST_DIR";
/// A UDP port or other value the parent picked for the peer.
pub const ARG: &str = "KASPAR_AERON_TEST_ARG";

/// Liveness timeout the tests configure: dead peers are reported within it.
pub const LIVENESS: Duration = Duration::from_secs(1);

/// Held by the timing-sensitive tests of one binary, so that they do not
/// compete for the CPU with each other: a media driver starved of CPU
/// checks its liveness timeouts late (the dev VM has 2 cores).
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The role this process plays, if it is a peer.
pub fn role() -> Option<String> {
    std::env::var(ROLE).ok()
}

/// The value the parent passed in [`ARG`].
pub fn arg() -> String {
    std::env::var(ARG).expect("the parent passes KASPAR_AERON_TEST_ARG")
}

/// A transport on an embedded driver with the tests' liveness.
pub fn embedded() -> AeronConfig {
    AeronConfig::embedded().liveness(LIVENESS)
}

/// A transport on the parent's driver (its directory in [`DIR`]).
pub fn parents_driver() -> AeronConfig {
    let dir = std::env::var(DIR).expect("the parent passes KASPAR_AERON_TEST_DIR");
    AeronConfig::external(dir).liveness(LIVENESS)
}

/// A child process running `test` as `role`; killed when dropped.
pub struct Peer {
    child: Child,
    lines: Receiver<String>,
}

impl Peer {
    /// Spawns this test binary running only `test`, with `role` and the
    /// given extra environment.
    pub fn spawn(test: &str, role: &str, env: &[(&str, &str)]) -> Peer {
        Peer::spawn_with(
            Command::new(std::env::current_exe().unwrap()),
            test,
            role,
            env,
        )
    }

    /// Like [`Peer::spawn`], through a wrapper command (`ip netns exec ...`)
    /// that runs this test binary.
    pub fn spawn_with(mut command: Command, test: &str, role: &str, env: &[(&str, &str)]) -> Peer {
        command
            .args([test, "--exact", "--nocapture", "--test-threads=1"])
            .env(ROLE, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn the peer process");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer { child, lines }
    }

    /// Waits for a line containing `prefix` and returns what follows it
    /// (anywhere in the line: the test harness prints `test name ... `
    /// without a newline before the test runs); panics after `timeout` or if
    /// the peer exits first.
    pub fn expect_line(&mut self, prefix: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(at) = line.find(prefix) {
                        return line[at + prefix.len()..].trim().to_owned();
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("the peer printed no {prefix:?} line within {timeout:?}")
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().ok();
                    panic!("the peer exited ({status:?}) before printing {prefix:?}")
                }
            }
        }
    }

    /// Waits at most `timeout` for the peer to exit; kills it after that.
    pub fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the peer") {
                return status;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!("the peer did not exit within {timeout:?}; killed");
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Writes one line to the peer's stdin (see [`parent_says`]).
    pub fn tell(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("the peer's stdin");
        writeln!(stdin, "{line}").expect("write to the peer");
        stdin.flush().expect("flush to the peer");
    }

    /// Kills the peer at once (SIGKILL: no clean-up of its own).
    pub fn kill(&mut self) {
        self.child.kill().expect("kill the peer");
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// In a peer: the next line the parent [`Peer::tell`]s, or `None` once the
/// parent is gone (its end of the pipe closed), so a peer never outlives it.
pub fn parent_says() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

/// In a peer: prints a line for [`Peer::expect_line`].
pub fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

/// A UDP port on 127.0.0.1 that was free a moment ago.
pub fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("bind a probe socket on 127.0.0.1")
        .port()
}

/// The directory of `transport`'s driver as a string for [`DIR`].
pub fn dir_of(transport: &AeronTransport) -> String {
    transport.aeron_dir().to_string_lossy().into_owned()
}

/// Whether `path` exists (to check that a driver directory was removed).
pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// Retries `attempt` every millisecond until it returns `Some`, at most
/// `timeout`.
pub fn within<T>(timeout: Duration, mut attempt: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = attempt() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(1));
    }
}

/// A frame carrying `seq`: the sequence number, then `seq`'s bytes repeated
/// up to `len` (so a torn or mixed-up frame fails the check).
pub fn write_frame(buf: &mut [u8], seq: u64) {
    let stamp = seq.to_le_bytes();
    for (i, byte) in buf.iter_mut().enumerate() {
        *byte = stamp[i % 8];
    }
}

/// Reads the sequence number of a frame written by [`write_frame`],
/// checking every byte.
pub fn read_frame(frame: &[u8]) -> u64 {
    assert!(frame.len() >= 8, "a frame of {} bytes", frame.len());
    let seq = u64::from_le_bytes(frame[..8].try_into().unwrap());
    let stamp = seq.to_le_bytes();
    for (i, byte) in frame.iter().enumerate() {
        assert_eq!(*byte, stamp[i % 8], "frame {seq} torn at byte {i}");
    }
    seq
}
