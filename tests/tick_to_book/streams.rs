//! The report's structure (paper Tables 8–12): six streams, a book and a
//! trade stream per instrument, every message of each accounted for, the
//! fields each record carries, Table 11's three floor estimates computed
//! from records whose answer is known, and the generator's release.

use kaspar_suite::rng::XorShift;
use kaspar_suite::tick_to_book::analysis::{
    analyse, peak_floor, peak_window, streams, tally, tally_records, ConfigReport, StreamId,
};
use kaspar_suite::tick_to_book::feed::Stream;
use kaspar_suite::tick_to_book::generator::{
    security_ids, FeedId, GenConfig, Hawkes, Release, INSTRUMENTS,
};
use kaspar_suite::tick_to_book::pipeline::{Record, QLEN_NONE};

use super::{ab_order, packets, run_inline};

#[test]
fn six_streams_and_every_message_of_each_is_published_or_lost() {
    let ids = streams();
    assert_eq!(ids.len(), 6);
    let names: Vec<String> = ids.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        ["ES book", "ES trade", "NQ book", "NQ trade", "ZN book", "ZN trade"]
    );
    assert_eq!(ids[5].key(), "zn_trade");

    let (gen, pkts) = packets(3_000);
    // Packet 1,000 is lost on both feeds: nothing after it fills the gap.
    let lost = 1_000u32;
    let r = run_inline(
        ab_order(pkts.len())
            .into_iter()
            .filter(|&(_, k)| k as u32 + 1 != lost)
            .map(|(f, k)| (f, pkts[k].clone())),
    );
    let sent = tally(gen.log().message_streams(|_| false));
    let delivered = tally(gen.log().message_streams(|seq| seq == lost));
    let published = tally_records(&r.records);
    assert_eq!(
        published, delivered,
        "per stream: sent less lost = published"
    );
    assert_eq!(published.1, 0, "no message of an unknown stream");
    assert!(published.0.iter().all(|&n| n > 0), "{:?}", published.0);
    assert_eq!(sent.0.iter().sum::<u64>(), gen.log().total_messages());
    let lost_messages: u64 = sent.0.iter().zip(&delivered.0).map(|(s, d)| s - d).sum();
    assert_eq!(lost_messages, gen.log().messages_in(lost) as u64);
    assert!(lost_messages > 0);

    let report = ConfigReport::new("one_thread", "one-thread".into(), &r.records);
    let counted: Vec<u64> = report.streams.iter().map(|s| s.n).collect();
    assert_eq!(counted, published.0, "the report's streams are the tally's");
    assert!(report
        .streams
        .iter()
        .zip(&ids)
        .all(|(s, &id)| s.id == Some(id)));
    let peaks: Vec<bool> = report.streams.iter().map(|s| s.peak.is_some()).collect();
    assert_eq!(
        peaks,
        [true, false, true, false, true, false],
        "book streams"
    );
}

#[test]
fn each_record_names_its_packet_its_span_and_its_instrument() {
    let (gen, pkts) = packets(2_000);
    let r = run_inline(pkts.iter().map(|p| (FeedId::A, p.clone())));
    assert_eq!(r.records.len() as u64, gen.log().total_messages());
    let ids = security_ids();
    let mut expected = gen.log().message_streams(|_| false);
    let mut k = 0;
    while k < r.records.len() {
        let first = r.records[k];
        let span = gen.log().messages_in(first.seq);
        assert_eq!(first.span as usize, span, "packet {}", first.seq);
        for (idx, rec) in r.records[k..k + span].iter().enumerate() {
            assert_eq!(
                (rec.seq, rec.idx as usize, rec.span),
                (first.seq, idx, first.span)
            );
            assert!(ids.contains(&rec.security_id));
            assert_eq!(Some((rec.security_id, rec.stream)), expected.next());
        }
        k += span;
    }
    assert_eq!(expected.next(), None);
}

/// A record of instrument `id`'s book stream at `t0` ms, position `idx`
/// in packet `seq` of `span` messages, `latency` ns, queue empty.
fn rec(id: i32, seq: u32, t0_ms: u64, idx: u8, span: u8, latency: u64) -> Record {
    Record {
        t0: 1_000_000_000 + t0_ms * 1_000_000,
        latency_ns: latency,
        stream: Stream::Book,
        security_id: id,
        seq,
        idx,
        span,
        qlen: 0,
    }
}

#[test]
fn the_three_floor_estimates_recover_an_exact_model() {
    const FLOOR: u64 = 7_000;
    const SLOPE: u64 = 500;
    let id = INSTRUMENTS[0].0;
    let mut records = Vec::new();
    let mut seq = 0;
    // 2 s of 100 ms windows, 4 packets in each, except window 13 with 20:
    // a 5x rise. Packets alternate spans 1..=4; latency = floor + slope × idx.
    for window in 0..20u64 {
        let packets = if window == 13 { 20 } else { 4 };
        for p in 0..packets {
            seq += 1;
            let span = (seq % 4 + 1) as u8;
            let t0_ms = window * 100 + p * 100 / packets;
            for idx in 0..span {
                records.push(rec(id, seq, t0_ms, idx, span, FLOOR + SLOPE * idx as u64));
            }
        }
    }
    let book = StreamId {
        security_id: id,
        stream: Stream::Book,
    };
    let s = analyse(&records, book);
    assert_eq!(s.n as usize, records.len());
    assert_eq!((s.floor, s.slope), (FLOOR as f64, SLOPE as f64), "fitted");
    assert_eq!(s.floor_direct.0, FLOOR as f64, "qlen = 0, idx = 0");
    assert_eq!(s.floor_direct.1 as u32, seq, "one idx-0 message per packet");
    assert_eq!(s.empty_queue, Some(1.0));

    let w = peak_window(&records, id, 100_000_000).expect("packets");
    assert_eq!(w.start_ns, 1_000_000_000 + 1_300_000_000);
    assert_eq!(w.packets, 20);
    assert_eq!(w.rise, 5.0, "20 packets against a median window of 4");
    let p = peak_floor(&records, id, 100_000_000).expect("packets");
    assert_eq!(p.window, w);
    assert_eq!(
        (p.floor, p.n),
        (FLOOR as f64, 5),
        "5 single-message packets"
    );
    assert_eq!(s.peak, Some(p));

    // Another instrument's packets are not this one's, and a zero window
    // finds nothing.
    assert_eq!(peak_window(&records, INSTRUMENTS[1].0, 100_000_000), None);
    assert_eq!(peak_window(&records, id, 0), None);
    // With no queue (the one-thread path), every message counts at qlen 0.
    let no_queue: Vec<Record> = records
        .iter()
        .map(|r| Record {
            qlen: QLEN_NONE,
            ..*r
        })
        .collect();
    let s = analyse(&no_queue, book);
    assert_eq!(
        (s.floor, s.floor_direct.0, s.empty_queue),
        (FLOOR as f64, FLOOR as f64, None)
    );
}

#[test]
fn a_release_raises_the_arrival_rate_while_it_lasts() {
    let release = Release {
        at_s: 1.0,
        secs: 0.5,
        factor: 6.0,
    };
    let cfg = GenConfig {
        rate: 20_000.0,
        release: Some(release),
        ..GenConfig::default()
    };
    // Long-run rate plus the extra baseline, each extra event counted
    // with the ones it triggers: 20,000 × (2 + 5 × 0.5).
    assert_eq!(cfg.expected_events(2.0), 90_000.0);
    assert_eq!(cfg.expected_events(1.0), 20_000.0, "before it starts");
    assert_eq!(GenConfig::default().expected_events(2.0), 40_000.0);

    let count = |release: Option<Release>| {
        let mut rng = XorShift::new(7);
        let mut h = Hawkes::new(20_000.0, 0.5, 8_000.0);
        if let Some(r) = release {
            h = h.with_release(r);
        }
        let mut per_100ms = [0u64; 20];
        loop {
            let bin = (h.next_event(&mut rng) * 10.0) as usize;
            if bin >= per_100ms.len() {
                return per_100ms;
            }
            per_100ms[bin] += 1;
        }
    };
    let calm = count(None);
    let busy = count(Some(release));
    let inside: u64 = busy[10..15].iter().sum();
    let before: u64 = busy[..10].iter().sum();
    // 0.5 s at 6x against 1 s at 1x: a ratio of 3 expected.
    let ratio = inside as f64 / before as f64;
    assert!((2.5..3.5).contains(&ratio), "{ratio}: {busy:?}");
    let outside = |c: &[u64; 20]| c[..10].iter().chain(&c[16..]).sum::<u64>() as f64;
    let drift = outside(&busy) / outside(&calm);
    assert!((0.9..1.1).contains(&drift), "{drift}: {busy:?} {calm:?}");
}
