//! The live console (feature `console`): a web page that shows a running
//! system as an operator needs it, served by the system itself.
//!
//! Two threads per console: `kaspar:console` samples the system once a
//! period (every live actor's counters, queue depth, latency percentiles,
//! senders; the dead letters) into one JSON document, and
//! `kaspar:console-http` serves that document and the page (HTML, script
//! and style embedded in the binary: no CDN, no network) to browsers
//! (`http.rs`). However many browsers poll, the system is read once a
//! period; a request costs a copy of the last document.
//!
//! What the page shows, and the JSON it polls: `sample.rs` and the guide's
//! chapter "The live console".

mod http;
mod json;
mod sample;

use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use self::http::Shared;
use self::sample::Sampler;
use crate::base::sync::{Condvar, Mutex};
use crate::system::{System, SystemInner};

/// How often [`System::console`] samples the system.
const DEFAULT_PERIOD: Duration = Duration::from_secs(1);

/// A running console, from [`System::console`]: its page is at
/// [`url`](Self::url). Dropping it (or [`stop`](Self::stop)) stops both
/// of its threads and closes its port.
///
/// It holds the system weakly: when the system is gone, the page keeps
/// showing the last sample (the actors stopped, if the system was shut
/// down) until the console is dropped.
#[must_use = "the console stops when its handle is dropped"]
pub struct Console {
    addr: SocketAddr,
    shared: Arc<Shared>,
    wake: Arc<Wake>,
    sampler: Option<JoinHandle<()>>,
    acceptor: Option<JoinHandle<()>>,
}

impl fmt::Debug for Console {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Console").field("addr", &self.addr).finish()
    }
}

impl Console {
    /// The address the console listens on (with the port the OS chose,
    /// if port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address: `http://127.0.0.1:<port>/` (a console bound to
    /// every interface is shown at its loopback address).
    pub fn url(&self) -> String {
        format!("http://{}/", reachable(self.addr))
    }

    /// Stops the console and waits for its threads (at most a sample and
    /// the connections being answered, each bounded by a timeout).
    /// Dropping it does the same.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.shared.stopping.store(true, Ordering::Release);
        self.wake.stop();
        if let Some(sampler) = self.sampler.take() {
            let _ = sampler.join();
        }
        if let Some(acceptor) = self.acceptor.take() {
            // The acceptor blocks in `accept`: a connection of our own
            // wakes it to see `stopping`. If even that fails (the port
            // filtered), it is left to exit at its next connection rather
            // than hang the drop.
            let woken = TcpStream::connect_timeout(&reachable(self.addr), Duration::from_secs(1));
            if woken.is_ok() {
                let _ = acceptor.join();
            }
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.halt();
    }
}

/// `addr`, with an unspecified IP (`0.0.0.0`, `::`) replaced by its
/// loopback one: somewhere a local client can connect.
fn reachable(addr: SocketAddr) -> SocketAddr {
    let mut to = addr;
    if addr.ip().is_unspecified() {
        to.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    to
}

/// Told to stop: the sampler waits on it between samples.
#[derive(Default)]
struct Wake {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl Wake {
    fn stop(&self) {
        *self.stopped.lock() = true;
        self.cv.notify_all();
    }

    /// Waits until `deadline`; whether it was told to stop.
    fn wait_until(&self, deadline: Instant) -> bool {
        let mut stopped = self.stopped.lock();
        while !*stopped {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            stopped = self.cv.wait_timeout(stopped, left).0;
        }
        *stopped
    }
}

/// The live console (feature `console`); the guide's chapter "The live
/// console" shows it.
impl System {
    /// Starts the live console on `addr`, sampling the system every
    /// second; see [`console_every`](Self::console_every).
    ///
    /// ```
    /// use kaspar::prelude::*;
    ///
    /// #[actor]
    /// pub struct Echo;
    /// #[actor]
    /// impl Echo {
    ///     #[handler(u32)]
    ///     fn echo(&mut self, n: u32, _c: &mut Ctx<Self>) -> u32 { n }
    /// }
    ///
    /// let system = System::new();
    /// let echo = system.spawn(Echo).name("echo").start();
    /// // Port 0: the OS picks a free one.
    /// let console = system.console("127.0.0.1:0").expect("a free port");
    /// println!("console at {}", console.url());
    /// echo.fast_send(7).unwrap();
    /// drop(console); // stops its threads, closes the port
    /// system.shutdown();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`console_every`](Self::console_every).
    pub fn console(&self, addr: impl ToSocketAddrs) -> io::Result<Console> {
        self.console_every(addr, DEFAULT_PERIOD)
    }

    /// Starts the live console on `addr`, sampling the system every
    /// `period`, and returns once its page can be loaded (the first sample
    /// taken). Open [`Console::url`] in a browser.
    ///
    /// The page shows every actor of the system, from the moment its
    /// address exists: the actor graph (who sends to whom, and how many
    /// messages a second), each actor's rate, mailbox depth, latency
    /// percentiles (for actors that [record them](crate::Spawn::record_latency)),
    /// refusals (busy, cycles, deadlocks), panics, restarts and dead
    /// letters, and the group and thread it runs on.
    ///
    /// Costs: while the feature is on, every send and synchronous delivery
    /// counts itself in its target's table of senders (a few loads and one
    /// relaxed atomic add; no allocation, no lock; the guide's chapter has
    /// the numbers). While a console runs, once a period, one observation
    /// of every actor, without its lock. Nothing else: a browser's request
    /// copies the last sample.
    ///
    /// Security: the console has no authentication and shows every actor's
    /// type and instance names and counts. Bind it to a loopback address
    /// (`127.0.0.1:<port>`), where it also answers only requests addressed
    /// to `localhost`, `127.0.0.1` or `[::1]` (so a web page elsewhere
    /// cannot read it through DNS rebinding); reach it from another host
    /// through an SSH tunnel rather than binding it to `0.0.0.0`.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `period` is zero or `addr` resolves to no
    /// address; otherwise what binding the port, or starting a thread,
    /// returned.
    pub fn console_every(&self, addr: impl ToSocketAddrs, period: Duration) -> io::Result<Console> {
        if period.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "kaspar: the console needs a sampling period above zero",
            ));
        }
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let mut sampler = Sampler::new(period);
        let shared = Arc::new(Shared::new(sampler.sample(&self.inner), addr));
        let wake = Arc::new(Wake::default());
        let system = Arc::downgrade(&self.inner);
        let (told, into) = (Arc::clone(&wake), Arc::clone(&shared));
        let sampling = std::thread::Builder::new()
            .name("kaspar:console".into())
            .spawn(move || keep_sampling(system, sampler, period, &told, &into))?;
        let mut console = Console {
            addr,
            shared: Arc::clone(&shared),
            wake,
            sampler: Some(sampling),
            acceptor: None,
        };
        // On an error here the console is dropped, which stops the sampler.
        console.acceptor = Some(
            std::thread::Builder::new()
                .name("kaspar:console-http".into())
                .spawn(move || http::accept(listener, shared))?,
        );
        Ok(console)
    }
}

/// The sampler thread's loop: a sample a period, until told to stop or
/// the system is gone.
fn keep_sampling(
    system: Weak<SystemInner>,
    mut sampler: Sampler,
    period: Duration,
    wake: &Wake,
    shared: &Shared,
) {
    let mut next = Instant::now();
    loop {
        // A sample that took longer than a period is followed by the next
        // one a period after it ended, not at once.
        next = (next + period).max(Instant::now());
        if wake.wait_until(next) {
            return;
        }
        // Upgraded for the sample only: between samples the console holds
        // nothing of the system.
        let Some(system) = system.upgrade() else {
            return;
        };
        let doc = sampler.sample(&system);
        drop(system);
        *shared.snapshot.lock() = doc.into();
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
