//! Capture: the [`SocketReader`] actors, one per feed on its own thread.
//! Each drains its socket until a stop flag is set and the socket is idle,
//! stamps `t0` right after `recv`, and hands the datagram to the group by
//! its [`Route`]: inline (`fast_send`, one-thread) or through the mailbox
//! (`send`, two-stage, counting `qlen`).

use std::io;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use kaspar::prelude::*;

use crate::tick_to_book::generator::FeedId;
use crate::tick_to_book::pipeline::{new_buf, Buf, Buffer, Datagram, InFlight, QLEN_NONE};

/// How a reader hands datagrams to the group.
#[derive(Debug)]
pub enum Route {
    /// `fast_send`: the reader's thread runs the group chain (one-thread).
    Inline(Addr<Buffer>),
    /// `send` through the group's mailbox (two-stage), counting datagrams
    /// in flight to measure `qlen`.
    Queued {
        /// The group's entry.
        buffer: Addr<Buffer>,
        /// Datagrams sent and not yet picked up.
        in_flight: Arc<AtomicU32>,
    },
}

/// Drain the socket until the stop flag is set and the socket is idle.
pub struct ReadUntilStopped;

/// What a reader did.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReaderStats {
    /// Datagrams read.
    pub datagrams: u64,
    /// Datagrams the hand-off refused (mailbox full or closed).
    pub refused: u64,
    /// Socket errors other than the read timeout.
    pub socket_errors: u64,
}

/// A socket reader: one per feed, on its own thread.
#[actor]
pub struct SocketReader {
    socket: UdpSocket,
    feed: FeedId,
    route: Route,
    stop: Arc<AtomicBool>,
    spare: Option<Buf>,
}

impl SocketReader {
    /// A reader of `socket` (whose read timeout bounds how long a stop
    /// request waits) for `feed`.
    pub fn new(socket: UdpSocket, feed: FeedId, route: Route, stop: Arc<AtomicBool>) -> Self {
        SocketReader {
            socket,
            feed,
            route,
            stop,
            spare: None,
        }
    }
}

#[actor]
impl SocketReader {
    /// Loops on the socket; returns when stopped. The reader's thread does
    /// nothing else, so blocking it here is its job.
    #[handler(ReadUntilStopped)]
    fn read(&mut self, _msg: ReadUntilStopped, ctx: &mut Ctx<Self>) -> ReaderStats {
        let mut stats = ReaderStats::default();
        loop {
            // The next buffer is drawn before the read, off the timed path.
            let mut buf = self.spare.take().unwrap_or_else(new_buf);
            match self.socket.recv(&mut buf[..]) {
                Ok(n) => {
                    let t0 = ctx.now().as_nanos();
                    stats.datagrams += 1;
                    let mut d = Datagram {
                        buf,
                        len: n as u16,
                        feed: self.feed,
                        t0,
                        qlen: QLEN_NONE,
                        ticket: None,
                    };
                    let handed = match &self.route {
                        Route::Inline(buffer) => buffer.fast_send(d).is_ok(),
                        Route::Queued { buffer, in_flight } => {
                            let (ticket, waiting) = InFlight::enter(in_flight);
                            d.qlen = waiting;
                            d.ticket = Some(ticket);
                            buffer.send(d).is_ok()
                        }
                    };
                    if !handed {
                        stats.refused += 1;
                    }
                }
                Err(e) => {
                    self.spare = Some(buf);
                    if !matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) {
                        stats.socket_errors += 1;
                    }
                    if self.stop.load(Ordering::Acquire) {
                        break;
                    }
                }
            }
        }
        stats
    }
}
