//! Sending the feed: [`run_sender`] runs the exchange in real time over
//! UDP, each packet on feed A, then on feed B one packet later (now and
//! then swapped with its neighbour), optionally writing the capture file;
//! [`offline_packets`] packetizes on a simulated send cycle, for tests and
//! captures.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::tick_to_book::feed::{PacketWriter, MAX_DATAGRAM};

use super::capture_file::CaptureWriter;
use super::exchange::Generator;

/// Which feed a datagram came in on.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum FeedId {
    /// Channel A.
    A,
    /// Channel B (the redundant copy).
    B,
}

/// Progress counters the sender updates while it runs.
#[derive(Debug, Default)]
pub struct SendProgress {
    /// Packets sent (each on both feeds).
    pub packets: AtomicU64,
    /// Messages in them.
    pub messages: AtomicU64,
}

/// How the live sender runs.
#[derive(Debug)]
pub struct SendPlan<'a> {
    /// How long to generate for.
    pub duration: Duration,
    /// Feed A's and feed B's receiving sockets.
    pub targets: [SocketAddr; 2],
    /// Probability that feed B swaps a packet with the one before it.
    pub b_reorder: f64,
    /// Stop early when set.
    pub stop: &'a AtomicBool,
    /// Updated as packets go out.
    pub progress: &'a SendProgress,
    /// Where to record the packet stream, if anywhere.
    pub capture: Option<&'a Path>,
}

/// What the sender did.
#[derive(Clone, Copy, Debug, Default)]
pub struct SendReport {
    /// Packets generated (each sent once on A and once on B).
    pub packets: u64,
    /// Datagrams the socket refused to send (counted as sent and lost).
    pub send_errors: u64,
    /// Wall time spent.
    pub elapsed: Duration,
}

/// Runs the exchange in real time: sleeps until the next event is due,
/// then coalesces every message available at that moment into one packet
/// and sends it on A, then on B one packet later (and now and then swapped
/// with its neighbour). The sleep's own granularity is part of the
/// coalescing, as an exchange's send cycle is.
pub fn run_sender(gen: &mut Generator, plan: &SendPlan<'_>) -> io::Result<SendReport> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    let mut capture = match plan.capture {
        Some(p) => Some(CaptureWriter::create(p)?),
        None => None,
    };
    let epoch = Instant::now();
    let wall0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    let mut writer = PacketWriter::default();
    let mut held: Vec<u8> = Vec::with_capacity(MAX_DATAGRAM);
    let mut has_held = false;
    let mut rng = gen.rng.split(0xB);
    let mut report = SendReport::default();
    let end = plan.duration.as_nanos() as u64;
    let send = |bytes: &[u8], to: SocketAddr, report: &mut SendReport| {
        if socket.send_to(bytes, to).is_err() {
            report.send_errors += 1;
        }
    };
    loop {
        let now = epoch.elapsed().as_nanos() as u64;
        if now >= end || plan.stop.load(Ordering::Relaxed) {
            break;
        }
        let due = gen.next_due_ns();
        if due > now {
            let wait = Duration::from_nanos((due - now).min(end - now));
            std::thread::sleep(wait);
            continue;
        }
        let sent_ns = wall0 + epoch.elapsed().as_nanos() as u64;
        if !gen.next_packet(now, sent_ns, &mut writer) {
            continue;
        }
        let bytes = writer.bytes();
        send(bytes, plan.targets[0], &mut report);
        if has_held && rng.chance(plan.b_reorder) {
            send(bytes, plan.targets[1], &mut report);
            send(&held, plan.targets[1], &mut report);
            has_held = false;
        } else {
            if has_held {
                send(&held, plan.targets[1], &mut report);
            }
            held.clear();
            held.extend_from_slice(bytes);
            has_held = true;
        }
        if let Some(c) = capture.as_mut() {
            c.record(sent_ns, bytes)?;
        }
        report.packets += 1;
        plan.progress.packets.fetch_add(1, Ordering::Relaxed);
        plan.progress
            .messages
            .fetch_add(writer.message_count() as u64, Ordering::Relaxed);
    }
    if has_held {
        send(&held, plan.targets[1], &mut report);
    }
    if let Some(c) = capture {
        c.finish()?;
    }
    report.elapsed = epoch.elapsed();
    Ok(report)
}

/// Offline packetization for tests and captures: the sender's clock
/// advances by `cadence_ns` per send cycle, so bursts coalesce exactly as
/// they would behind a sender that wakes every `cadence_ns`.
pub fn offline_packets(gen: &mut Generator, packets: usize, cadence_ns: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(packets);
    let mut writer = PacketWriter::default();
    let mut now = 0;
    while out.len() < packets {
        now = now.max(gen.next_due_ns()) + cadence_ns;
        while out.len() < packets && gen.next_packet(now, now, &mut writer) {
            out.push(writer.bytes().to_vec());
        }
    }
    out
}
