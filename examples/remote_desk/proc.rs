//! The three processes are this binary re-launched: the role comes in an
//! environment variable, control lines go down the child's stdin and come
//! back on its stdout, marked apart from what the child prints for the
//! reader. Every wait has a deadline, and a child is killed when its
//! handle drops, so no exit path leaves a process behind.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Set in a child: the role it plays.
pub const ROLE: &str = "KASPAR_REMOTE_DESK_ROLE";
/// Set in a child: the iceoryx2 namespace of this run.
pub const NS: &str = "KASPAR_REMOTE_DESK_NS";
/// Marks a control line on a child's stdout.
const MARK: &str = "@@";

/// In a child: tells the parent `line`.
pub fn tell(line: &str) {
    println!("{MARK}{line}");
}

/// In a child: the next line from the parent, or `None` when the parent
/// closed stdin (or died, which closes it too).
pub fn heard() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

/// A child process, from the parent's side.
pub struct Proc {
    name: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    control: Receiver<String>,
}

impl Proc {
    /// Re-launches this binary as `role`; what the child prints is shown
    /// prefixed with its name, as it comes.
    pub fn spawn(name: &'static str, role: &str, ns: &str) -> Result<Proc, String> {
        let exe = std::env::current_exe().map_err(|e| format!("this binary's path: {e}"))?;
        let mut child = Command::new(exe)
            .env(ROLE, role)
            .env(NS, ns)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("start {name}: {e}"))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, control) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match line.strip_prefix(MARK) {
                    Some(said) => {
                        if tx.send(said.to_owned()).is_err() {
                            break;
                        }
                    }
                    None => println!("  [{name}] {line}"),
                }
            }
        });
        Ok(Proc {
            name,
            stdin: child.stdin.take(),
            child,
            control,
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits at most `limit` for the child to tell `what`.
    pub fn expect(&mut self, what: &str, limit: Duration) -> Result<(), String> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.control.recv_timeout(left) {
                Ok(said) if said == what => return Ok(()),
                Ok(said) if said.starts_with("FAILED") => {
                    return Err(format!("{}: {said}", self.name))
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("{} did not say {what} within {limit:?}", self.name))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("{} ended before saying {what}", self.name))
                }
            }
        }
    }

    /// Sends the child one line.
    pub fn say(&mut self, line: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("tell {}: {e}", self.name))
    }

    /// SIGKILL, and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes the child's stdin (its signal to finish) and waits at most
    /// `limit` for it to exit successfully; kills it after that.
    pub fn finish(mut self, limit: Duration) -> Result<(), String> {
        self.stdin = None;
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => return Err(format!("{} failed: {status}", self.name)),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(None) => {
                    self.kill();
                    return Err(format!("{} did not exit within {limit:?}", self.name));
                }
                Err(e) => return Err(format!("poll {}: {e}", self.name)),
            }
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// Removes what this run left in `/dev/shm` under its namespace, and says
/// what that was besides the one file iceoryx2 keeps per namespace on
/// purpose (its node counter, `*.global_mgmt`): anything else is a leak.
pub fn clean_shm(ns: &str) -> Vec<String> {
    let prefix = format!("kaspar_{ns}_");
    let mut leaked = Vec::new();
    let Ok(entries) = std::fs::read_dir("/dev/shm") else {
        return leaked;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) {
            if !name.ends_with(".global_mgmt") {
                leaked.push(name);
            }
            let _ = std::fs::remove_file(entry.path());
        }
    }
    leaked
}
