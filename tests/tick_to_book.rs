//! The tick-to-book example's feed, generator, arbitration and pipeline:
//! the book the pipeline builds equals the generator's, every datagram and
//! message is accounted for, no datagram, however malformed, panics the
//! decoder, and the group replayed in a `Simulation` from the recorded
//! arrivals produces exactly what the live group produced. The report's
//! structure (six streams, the floor estimates, the release) is checked in
//! `tick_to_book/streams.rs`.

#[path = "tick_to_book/streams.rs"]
mod streams;

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kaspar::prelude::*;
use kaspar_suite::rng::XorShift;
use kaspar_suite::tick_to_book::feed::{
    self, Action, Arbiter, Book, BookEntry, DecodeError, Entry, Packet, PacketWriter, Side, Stream,
    TradeEntry, ARBITRATION_WINDOW, MAX_DATAGRAM, MAX_MESSAGES,
};
use kaspar_suite::tick_to_book::generator::{
    offline_packets, read_capture, run_sender, security_ids, CaptureWriter, FeedId, GenConfig,
    Generator, Hawkes, SendPlan, SendProgress,
};
use kaspar_suite::tick_to_book::pipeline::{
    self, ArrivalLog, Datagram, GroupResults, InFlight, MarketData, Order, OrderLog, OrderOut,
    ReadUntilStopped, Route, SocketReader,
};
use kaspar_suite::tick_to_book::replay;

const SEED: u64 = 42;

fn packets(n: usize) -> (Generator, Vec<Vec<u8>>) {
    let mut gen = Generator::new(&GenConfig {
        seed: SEED,
        ..GenConfig::default()
    });
    let p = offline_packets(&mut gen, n, 150_000);
    (gen, p)
}

/// The order the two feeds' copies reach the group: B one packet behind A,
/// every 17th pair of B packets swapped, and every 23rd pair of A packets.
fn ab_order(n: usize) -> Vec<(FeedId, usize)> {
    let mut a: Vec<usize> = (0..n).collect();
    for k in (5..n.saturating_sub(1)).step_by(23) {
        a.swap(k, k + 1);
    }
    let mut order = Vec::new();
    let mut held: Option<usize> = None;
    for (k, &ak) in a.iter().enumerate() {
        order.push((FeedId::A, ak));
        match held.take() {
            Some(prev) if k % 17 == 0 => {
                order.push((FeedId::B, k));
                order.push((FeedId::B, prev));
            }
            Some(prev) => {
                order.push((FeedId::B, prev));
                held = Some(k);
            }
            None => held = Some(k),
        }
    }
    order.extend(held.map(|k| (FeedId::B, k)));
    order
}

fn group(system: &System) -> MarketData {
    MarketData::launch(
        system,
        MailboxKind::bqueue(1024),
        &security_ids(),
        1 << 16,
        None,
    )
}

/// Feeds `deliveries` to the group by `fast_send` (the one-thread path)
/// and collects the results.
fn run_inline(deliveries: impl IntoIterator<Item = (FeedId, Vec<u8>)>) -> GroupResults {
    let system = System::new();
    let g = group(&system);
    for (t, (feed, bytes)) in deliveries.into_iter().enumerate() {
        g.buffer
            .fast_send(Datagram::copy_of(&bytes, feed, t as u64))
            .expect("the group is running");
    }
    g.end_of_feed();
    let r = g.results();
    system.shutdown();
    r
}

#[test]
fn the_book_built_from_the_feed_equals_the_reference_book() {
    let (gen, pkts) = packets(3_000);
    let r = run_inline(
        ab_order(pkts.len())
            .into_iter()
            .map(|(f, k)| (f, pkts[k].clone())),
    );
    let n = pkts.len() as u64;
    assert_eq!(r.book, gen.reference(), "the full book, every level");
    assert_eq!(r.book, *gen.generated_book(), "nothing left staged");
    assert!(r
        .book
        .instruments()
        .iter()
        .all(|i| !i.bids.levels().is_empty() && !i.asks.levels().is_empty() && i.trades > 0));
    assert_eq!(r.received, 2 * n);
    assert_eq!(r.arbiter.accepted, n);
    assert_eq!(r.arbiter.duplicates, n);
    assert_eq!(r.arbiter.gap_packets, 0);
    assert!(
        r.arbiter.held > 0,
        "A's swapped pairs were held and released"
    );
    assert_eq!(r.messages, gen.log().total_messages());
    assert_eq!(r.records.len() as u64, r.messages);
    assert_eq!((r.decode_errors, r.book_refused, r.chain_errors), (0, 0, 0));
}

#[test]
fn the_two_stage_path_builds_the_same_book_and_counts_qlen() {
    let (gen, pkts) = packets(1_500);
    let system = System::new();
    let g = group(&system);
    let in_flight = Arc::new(AtomicU32::new(0));
    let mut qlens = Vec::new();
    for (feed, k) in ab_order(pkts.len()) {
        let mut d = Datagram::copy_of(&pkts[k], feed, 0);
        let (ticket, waiting) = InFlight::enter(&in_flight);
        d.qlen = waiting;
        d.ticket = Some(ticket);
        qlens.push(waiting);
        g.buffer.send(d).expect("the group is running");
    }
    g.end_of_feed();
    assert_eq!(
        in_flight.load(Ordering::Acquire),
        0,
        "every ticket returned"
    );
    let r = g.results();
    system.shutdown();
    assert_eq!(r.book, gen.reference());
    assert_eq!(r.messages, gen.log().total_messages());
    assert!(r
        .records
        .iter()
        .all(|rec| rec.qlen != pipeline::QLEN_NONE && qlens.contains(&rec.qlen)));
}

#[test]
fn counts_balance_exactly_when_packets_are_lost() {
    let (gen, pkts) = packets(2_000);
    let n = pkts.len();
    // Lost on both feeds: 100..103 and 1500; lost on A only: every 7th;
    // on B only: every 11th. The last packet is lost on both, so the
    // arbiter never sees the end.
    let both = |k: usize| (100..103).contains(&k) || k == 1_500 || k == n - 1;
    let lost_on = |f: FeedId, k: usize| {
        both(k) || (f == FeedId::A && k % 7 == 3) || (f == FeedId::B && k % 11 == 5 && k % 7 != 3)
    };
    let deliveries: Vec<(FeedId, Vec<u8>)> = ab_order(n)
        .into_iter()
        .filter(|&(f, k)| !lost_on(f, k))
        .map(|(f, k)| (f, pkts[k].clone()))
        .collect();
    let sent_datagrams = 2 * n as u64;
    let delivered = deliveries.len() as u64;
    let r = run_inline(deliveries);

    let trailing = (n as u64 + 1) - r.next_expected as u64;
    assert_eq!(r.received, delivered);
    // datagrams: sent = handled + duplicates dropped + lost on the way
    assert_eq!(
        sent_datagrams,
        r.arbiter.accepted + r.arbiter.duplicates + (sent_datagrams - delivered)
    );
    // packets: sent = handled + counted gaps (+ a tail nothing came after)
    assert_eq!(
        n as u64,
        r.arbiter.accepted + r.arbiter.gap_packets + trailing
    );
    assert_eq!(r.arbiter.gap_packets, 4);
    assert_eq!(trailing, 1);
    assert_eq!(r.gap_ranges, vec![(101, 104), (1_501, 1_502)]);
    // messages: sent = published + those in lost packets
    let lost_seq = |seq: u32| both(seq as usize - 1);
    let lost_msgs: u64 = (1..=n as u32)
        .filter(|&s| lost_seq(s))
        .map(|s| gen.log().messages_in(s) as u64)
        .sum();
    assert_eq!(gen.log().total_messages(), r.messages + lost_msgs);
    assert_eq!(r.book, gen.log().replay(lost_seq));
}

#[test]
fn the_arbiter_holds_reordered_packets_and_declares_gaps_late() {
    let mut arb = Arbiter::<u32>::default();
    let mut out = Vec::new();
    arb.offer(1, 1, |x| out.push(x));
    arb.offer(3, 3, |x| out.push(x)); // held: 2 is missing
    arb.offer(4, 4, |x| out.push(x));
    assert_eq!(out, [1]);
    arb.offer(2, 2, |x| out.push(x)); // B fills the hole
    assert_eq!(out, [1, 2, 3, 4]);
    arb.offer(3, 3, |x| out.push(x));
    assert_eq!(arb.stats().duplicates, 1);
    // 5 never comes; a packet beyond the window forces the gap.
    arb.offer(6, 6, |x| out.push(x));
    arb.offer(5 + ARBITRATION_WINDOW, 99, |x| out.push(x));
    assert_eq!(out, [1, 2, 3, 4, 6]);
    assert_eq!(arb.gap_ranges(), &[(5, 6)]);
    arb.offer(5, 5, |x| out.push(x)); // too late: a duplicate now
    arb.flush(|x| out.push(x));
    assert_eq!(out, [1, 2, 3, 4, 6, 99]);
    let s = arb.stats();
    assert_eq!(s.accepted, 6);
    assert_eq!(s.duplicates, 2);
    assert_eq!(s.gap_packets, 1 + (ARBITRATION_WINDOW as u64 - 2));
    assert_eq!(arb.holding(), 0);
}

/// A valid one-message book packet with `entries` entries.
fn book_packet(seq: u32, entries: usize) -> Vec<u8> {
    let mut w = PacketWriter::default();
    w.begin(seq, 7);
    let e: Vec<Entry> = (0..entries)
        .map(|i| {
            Entry::Book(BookEntry {
                price: 100 + i as i64,
                size: 5,
                security_id: 5602,
                level: 1,
                side: Side::Bid,
                action: Action::New,
            })
        })
        .collect();
    assert!(w.push(Stream::Book, 1, &e));
    w.bytes().to_vec()
}

#[test]
fn malformed_datagrams_are_errors_not_panics() {
    let good = book_packet(1, 2);
    assert!(Packet::parse(&good).is_ok());
    let m = feed::PACKET_HEADER_LEN; // first message
    let group = m + feed::MESSAGE_HEADER_LEN + feed::ROOT_BLOCK_LEN as usize;
    let set16 =
        |b: &mut Vec<u8>, at: usize, v: u16| b[at..at + 2].copy_from_slice(&v.to_le_bytes());

    let truncated = good[..good.len() - 5].to_vec();
    assert!(matches!(
        Packet::parse(&truncated),
        Err(DecodeError::Truncated { .. })
    ));
    assert!(matches!(
        Packet::parse(&good[..5]),
        Err(DecodeError::Truncated { at: 0 })
    ));
    assert_eq!(Packet::parse(&good[..m]).unwrap_err(), DecodeError::Empty);

    let mut template = good.clone();
    set16(&mut template, m + 4, 999);
    assert_eq!(
        Packet::parse(&template).unwrap_err(),
        DecodeError::BadTemplate {
            at: m,
            template: 999
        }
    );
    let mut schema = good.clone();
    set16(&mut schema, m + 6, 2);
    assert!(matches!(
        Packet::parse(&schema),
        Err(DecodeError::BadSchema { .. })
    ));
    let mut root = good.clone();
    set16(&mut root, m + 2, 4);
    assert!(matches!(
        Packet::parse(&root),
        Err(DecodeError::BadBlockLength { .. })
    ));
    let mut entry = good.clone();
    set16(&mut entry, group, 12);
    assert!(matches!(
        Packet::parse(&entry),
        Err(DecodeError::BadBlockLength { .. })
    ));
    let mut count = good.clone();
    count[group + 2] = 40;
    assert_eq!(
        Packet::parse(&count).unwrap_err(),
        DecodeError::GroupOverrun {
            at: group,
            count: 40
        }
    );
    let mut size = good.clone();
    set16(&mut size, m, 3);
    assert!(matches!(
        Packet::parse(&size),
        Err(DecodeError::BadMessageSize { .. })
    ));
    let mut side = good.clone();
    side[group + 3 + 17] = 9;
    assert!(matches!(
        Packet::parse(&side),
        Err(DecodeError::BadField { .. })
    ));
    // A larger block length is an extension: skipped, not an error.
    let mut ext = good.clone();
    set16(&mut ext, m + 2, feed::ROOT_BLOCK_LEN + 2);
    ext.splice(group..group, [0xEE, 0xEE]);
    let len = u16::from_le_bytes([ext[m], ext[m + 1]]) + 2;
    set16(&mut ext, m, len);
    let p = Packet::parse(&ext).expect("an extended root block is fine");
    assert_eq!(p.messages().next().unwrap().entry_count(), 2);

    // Through the pipeline: each malformed datagram is counted and skipped
    // as a whole, the stream goes on, the book is exactly what the valid
    // packets build.
    let (gen, mut pkts) = packets(400);
    type Corrupt = fn(&mut Vec<u8>);
    let broken: Vec<(usize, Corrupt)> = vec![
        (10, |b| b.truncate(b.len() - 3)),
        (20, |b| b[12 + 4] = 0x77),
        (30, |b| b[12 + 2] = 1),
        (40, |b| {
            let g = 12 + 10 + u16::from_le_bytes([b[14], b[15]]) as usize;
            b[g + 2] = 200;
        }),
        (50, |b| b.truncate(12)),
    ];
    for (k, f) in &broken {
        f(&mut pkts[*k]);
    }
    let r = run_inline(
        pkts.iter()
            .flat_map(|p| [(FeedId::A, p.clone()), (FeedId::B, p.clone())]),
    );
    assert_eq!(r.decode_errors, broken.len() as u64);
    assert_eq!(r.arbiter.accepted, pkts.len() as u64);
    assert_eq!(r.packets + r.decode_errors, r.arbiter.accepted);
    let skipped = |seq: u32| broken.iter().any(|(k, _)| *k as u32 + 1 == seq);
    assert_eq!(r.book, gen.log().replay(skipped));
    // Runts (shorter than a packet header) never reach arbitration.
    let r = run_inline([(FeedId::A, vec![1, 2, 3])]);
    assert_eq!((r.runts, r.arbiter.accepted), (1, 0));
}

#[test]
fn the_decoder_survives_random_and_mutated_bytes() {
    let mut rng = XorShift::new(7);
    let (_, valid) = packets(200);
    let mut book = Book::new(&security_ids());
    let (mut parsed, mut rejected) = (0u32, 0u32);
    let mut buf = Vec::with_capacity(MAX_DATAGRAM);
    for case in 0..20_000u32 {
        buf.clear();
        if case % 2 == 0 {
            // Random bytes, sometimes behind a plausible message header so
            // the walk gets past the first checks.
            let len = rng.below(MAX_DATAGRAM as u64 + 1) as usize;
            buf.extend((0..len).map(|_| rng.next_u64() as u8));
            if len >= 22 && rng.chance(0.5) {
                buf[12..22].copy_from_slice(&valid[0][12..22]);
            }
        } else {
            // A valid packet, mutated: flipped bits, overwritten bytes, cut.
            buf.extend_from_slice(&valid[rng.below(valid.len() as u64) as usize]);
            for _ in 0..rng.range(1, 4) {
                let at = rng.below(buf.len() as u64) as usize;
                match rng.below(3) {
                    0 => buf[at] ^= 1 << rng.below(8),
                    1 => buf[at] = rng.next_u64() as u8,
                    _ => buf.truncate(at.max(1)),
                }
            }
        }
        match feed::exercise(&buf, &mut book) {
            Ok(_) => parsed += 1,
            Err(_) => rejected += 1,
        }
    }
    assert!(
        parsed > 1_000 && rejected > 1_000,
        "{parsed} parsed, {rejected} rejected"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1_000))]

    /// Any bytes at all: decoding either succeeds or reports an error.
    #[test]
    fn the_decoder_never_panics_on_arbitrary_bytes(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..MAX_DATAGRAM)
    ) {
        let mut book = Book::new(&security_ids());
        let _ = feed::exercise(&bytes, &mut book);
    }

    /// A valid packet with one byte replaced and the tail cut somewhere:
    /// the walk goes deep into the message before the damage.
    #[test]
    fn the_decoder_never_panics_on_damaged_packets(
        which in 0usize..50,
        at in 0usize..MAX_DATAGRAM,
        byte in proptest::prelude::any::<u8>(),
        cut in 0usize..MAX_DATAGRAM,
    ) {
        let (_, valid) = packets(50);
        let mut buf = valid[which % valid.len()].clone();
        let at = at % buf.len();
        buf[at] = byte;
        buf.truncate(cut.max(1).min(buf.len()));
        let mut book = Book::new(&security_ids());
        let _ = feed::exercise(&buf, &mut book);
    }
}

#[test]
fn encoding_round_trips() {
    let mut w = PacketWriter::default();
    w.begin(9, 123);
    let trades = [Entry::Trade(TradeEntry {
        price: -5,
        size: 3,
        security_id: 7921,
        aggressor: Side::Ask,
    })];
    let books = [
        Entry::Book(BookEntry {
            price: i64::MAX,
            size: i32::MIN,
            security_id: 5602,
            level: 10,
            side: Side::Ask,
            action: Action::Delete,
        }),
        Entry::Book(BookEntry {
            price: 0,
            size: 1,
            security_id: 3141,
            level: 1,
            side: Side::Bid,
            action: Action::Change,
        }),
    ];
    assert!(w.push(Stream::Trade, 1, &trades));
    assert!(w.push(Stream::Book, 2, &books));
    let p = Packet::parse(w.bytes()).unwrap();
    assert_eq!((p.seq, p.sending_time, p.message_count()), (9, 123, 2));
    let msgs: Vec<_> = p.messages().collect();
    assert_eq!((msgs[0].stream, msgs[0].transact_time), (Stream::Trade, 1));
    assert_eq!(msgs[0].entries().collect::<Vec<_>>(), trades);
    assert_eq!(msgs[1].entries().collect::<Vec<_>>(), books);
}

#[test]
fn the_generator_is_deterministic_clustered_and_within_packet_limits() {
    let (_, a) = packets(3_000);
    let (gen, b) = packets(3_000);
    assert_eq!(a, b, "same seed, same bytes");
    let sizes = gen.log().size_histogram();
    assert_eq!(sizes[0], 0);
    assert!(b.iter().all(|p| p.len() <= MAX_DATAGRAM));
    assert!(sizes.iter().skip(MAX_MESSAGES + 1).all(|&c| c == 0));
    assert!(
        sizes[1] > 0 && sizes.iter().skip(20).any(|&c| c > 0),
        "{sizes:?}"
    );

    // Index of dispersion of event counts in 1 ms windows: 1 for Poisson,
    // well above it for a self-exciting process.
    let dispersion = |branching: f64| {
        let mut rng = XorShift::new(SEED);
        let mut h = Hawkes::new(20_000.0, branching, 8_000.0);
        let mut counts = vec![0f64; 2_000];
        loop {
            let bin = (h.next_event(&mut rng) * 1e3) as usize;
            if bin >= counts.len() {
                break;
            }
            counts[bin] += 1.0;
        }
        let n = counts.len() as f64;
        let mean = counts.iter().sum::<f64>() / n;
        let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / n;
        (mean, var / mean)
    };
    let (mean, poisson) = dispersion(0.0);
    assert!(
        (mean - 20.0).abs() < 2.0 && poisson < 1.3,
        "{mean} {poisson}"
    );
    let (mean, clustered) = dispersion(0.85);
    assert!(
        (mean - 20.0).abs() < 6.0 && clustered > 3.0,
        "{mean} {clustered}"
    );
}

#[test]
fn a_capture_file_round_trips() {
    let (_, pkts) = packets(300);
    let path = std::env::temp_dir().join(format!("kaspar_ttb_{}.cap", std::process::id()));
    let mut w = CaptureWriter::create(&path).unwrap();
    for (t, p) in pkts.iter().enumerate() {
        w.record(t as u64 * 1_000, p).unwrap();
    }
    w.finish().unwrap();
    let back = read_capture(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(back.len(), pkts.len());
    assert!(back
        .iter()
        .zip(&pkts)
        .enumerate()
        .all(|(t, ((ts, b), p))| *ts == t as u64 * 1_000 && b == p));
}

/// A short live run over 127.0.0.1: sender, two socket readers, the group.
/// Timing decides packet boundaries and losses; the balances and the book
/// must hold whatever they are.
#[test]
fn a_live_loopback_run_balances_and_builds_the_reference_book() {
    for inline in [true, false] {
        let system = System::new();
        let g = group(&system);
        let stop = Arc::new(AtomicBool::new(false));
        let in_flight = Arc::new(AtomicU32::new(0));
        let mut targets = Vec::new();
        let mut asks = Vec::new();
        for feed in [FeedId::A, FeedId::B] {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            s.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
            targets.push(s.local_addr().unwrap());
            let route = if inline {
                Route::Inline(g.buffer.clone())
            } else {
                Route::Queued {
                    buffer: g.buffer.clone(),
                    in_flight: Arc::clone(&in_flight),
                }
            };
            let reader = system
                .spawn(SocketReader::new(s, feed, route, Arc::clone(&stop)))
                .start();
            asks.push(reader.ask(ReadUntilStopped).unwrap());
        }
        let mut gen = Generator::new(&GenConfig {
            rate: 5_000.0,
            seed: SEED,
            ..GenConfig::default()
        });
        let never = AtomicBool::new(false);
        let progress = SendProgress::default();
        let sent = run_sender(
            &mut gen,
            &SendPlan {
                duration: Duration::from_millis(300),
                targets: [targets[0], targets[1]],
                b_reorder: 0.05,
                stop: &never,
                progress: &progress,
                capture: None,
            },
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(30));
        stop.store(true, Ordering::Release);
        let read: u64 = asks.into_iter().map(|a| a.wait().unwrap().datagrams).sum();
        g.end_of_feed();
        let r = g.results();
        system.shutdown();

        let n = sent.packets;
        assert!(n > 100, "{n} packets");
        assert_eq!(progress.packets.load(Ordering::Relaxed), n);
        assert_eq!(read, r.received, "nothing refused at the hand-off");
        assert!(read <= 2 * n);
        assert_eq!(r.received, r.arbiter.accepted + r.arbiter.duplicates);
        let trailing = (n + 1).saturating_sub(r.next_expected as u64);
        assert_eq!(n, r.arbiter.accepted + r.arbiter.gap_packets + trailing);
        let lost = |seq: u32| {
            seq >= r.next_expected || r.gap_ranges.iter().any(|&(a, b)| (a..b).contains(&seq))
        };
        let lost_msgs: u64 = (1..=n as u32)
            .filter(|&s| lost(s))
            .map(|s| gen.log().messages_in(s) as u64)
            .sum();
        assert_eq!(gen.log().total_messages(), r.messages + lost_msgs);
        assert_eq!(r.book, gen.log().replay(lost));
        assert_eq!(in_flight.load(Ordering::Acquire), 0);
    }
}

/// The live side of the duality test: a group on a `System`, its journal
/// on, its signal wired to a recording order-out, fed by `send` from this
/// thread with `t0` from the system clock, as a socket reader stamps it.
fn run_live_journaled(deliveries: &[(FeedId, &[u8])]) -> (GroupResults, ArrivalLog, Vec<Order>) {
    let system = System::new();
    let log = OrderLog::default();
    let out = system.spawn(OrderOut::recording(Arc::clone(&log))).start();
    let g = MarketData::launch(
        &system,
        MailboxKind::bqueue(1024),
        &security_ids(),
        1 << 16,
        Some(&out),
    );
    g.journal(deliveries.len());
    for &(feed, bytes) in deliveries {
        let t0 = kaspar::Clock::System.now().as_nanos();
        let mut d = Datagram::copy_of(bytes, feed, t0);
        // Counted as if it had crossed the mailbox behind 7 others: qlen
        // is carried through to the records, and the replay keeps it.
        d.qlen = 7;
        g.buffer.send(d).expect("the group is running");
    }
    g.end_of_feed();
    let results = g.results();
    let arrivals = g.take_arrivals();
    // Shutdown drains order-out: every order the signal sent is logged.
    system.shutdown();
    let orders = std::mem::take(&mut *log.lock().unwrap());
    (results, arrivals, orders)
}

#[test]
fn the_group_replayed_in_simulation_gives_the_live_signals() {
    let (_, pkts) = packets(12_000);
    // A on time but for two swapped pairs; B behind and reordered; packet
    // 400 lost on both feeds (a gap), 900 on A only, and a runt.
    let mut deliveries: Vec<(FeedId, &[u8])> = ab_order(pkts.len())
        .into_iter()
        .filter(|&(f, k)| k != 399 && !(k == 899 && f == FeedId::A))
        .map(|(f, k)| (f, pkts[k].as_slice()))
        .collect();
    deliveries.insert(5_000, (FeedId::B, &[1u8, 2, 3][..]));
    let (live, log, live_orders) = run_live_journaled(&deliveries);
    assert_eq!(log.stamps.len(), deliveries.len(), "one stamp per datagram");
    assert_eq!(log.unsequenced.len(), 1, "the runt's bytes are kept");
    assert_eq!(live.arbiter.gaps, 1);
    assert_eq!(live.runts, 1);
    assert!(
        live_orders.len() >= 3,
        "the feed makes the signal fire: {} orders",
        live_orders.len()
    );
    assert_eq!(live_orders.len() as u64, live.orders);

    // The capture file: the exchange's packets, with their send times.
    let capture: Vec<(u64, Vec<u8>)> = pkts
        .iter()
        .enumerate()
        .map(|(k, p)| (k as u64 * 1_000, p.clone()))
        .collect();
    let arrivals = replay::join(&log, &capture).expect("every stamp has its packet");
    assert_eq!(arrivals.len(), deliveries.len());
    assert!(arrivals
        .iter()
        .zip(&deliveries)
        .all(|(a, &(f, b))| a.feed == f && a.bytes == b && a.qlen == 7));
    // Through the arrivals file and back.
    let path = std::env::temp_dir().join(format!("kaspar_ttb_{}.arrivals", std::process::id()));
    replay::write_arrivals(&path, &arrivals).unwrap();
    let from_file = replay::read_arrivals(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(from_file, arrivals);

    let first = replay::replay(&from_file, &security_ids());
    replay::compare(&live_orders, &live, &first).expect("the simulation reproduces the live run");
    assert_eq!(first.orders, live_orders);
    assert_eq!(first.results.book, live.book);
    // On virtual time the clock reads the t0 of the datagram being
    // handled: a packet published on arrival shows no latency, one the
    // arbiter held shows how long (in feed time) it waited.
    assert!(first.results.records.iter().any(|r| r.latency_ns == 0));
    assert!(first.results.records.iter().any(|r| r.latency_ns > 0));

    // And again: a simulation is deterministic, latencies included.
    let second = replay::replay(&from_file, &security_ids());
    replay::compare(&live_orders, &live, &second).expect("and again");
    assert_eq!(second.orders, first.orders);
    assert!(second
        .results
        .records
        .iter()
        .zip(&first.results.records)
        .all(|(a, b)| (a.t0, a.latency_ns, a.stream, a.idx, a.qlen)
            == (b.t0, b.latency_ns, b.stream, b.idx, b.qlen)));
}

#[test]
fn a_replay_of_a_different_sequence_is_reported_different() {
    let (_, pkts) = packets(12_000);
    let deliveries: Vec<(FeedId, &[u8])> = ab_order(pkts.len())
        .into_iter()
        .map(|(f, k)| (f, pkts[k].as_slice()))
        .collect();
    let (live, log, live_orders) = run_live_journaled(&deliveries);
    let capture: Vec<(u64, Vec<u8>)> = pkts.iter().map(|p| (0, p.clone())).collect();
    let arrivals = replay::join(&log, &capture).unwrap();

    let sim = replay::replay(&arrivals, &security_ids());
    assert_eq!(replay::compare(&live_orders, &live, &sim), Ok(()));

    // Another input sequence: packet 1000 lost on both feeds. The
    // comparison catches it (the records, the books, the counters).
    let mut altered = replay::Arrivals::default();
    arrivals
        .iter()
        .filter(|a| feed::peek_seq(a.bytes) != Some(1000))
        .for_each(|a| altered.push(a));
    assert_eq!(altered.len(), arrivals.len() - 2);
    let sim = replay::replay(&altered, &security_ids());
    assert!(replay::compare(&live_orders, &live, &sim).is_err());

    // A journal naming a packet the capture lacks does not join.
    assert!(replay::join(&log, &capture[..capture.len() / 2]).is_err());
}
