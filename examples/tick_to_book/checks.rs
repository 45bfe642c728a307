//! The checks after a live run: every datagram, packet and message
//! balances exactly ([`check_balances`]), and the pipeline's book equals
//! the generator's reference ([`check_book`]). Each pushes its report
//! lines and returns whether it held.

use kaspar_suite::tick_to_book::analysis::{streams, tally, tally_records};
use kaspar_suite::tick_to_book::generator::{Generator, SendReport};
use kaspar_suite::tick_to_book::pipeline::GroupResults;

use crate::run::Ended;

/// Whether packet `seq` never reached the book: declared a gap, or past
/// the last one the arbiter passed on.
fn was_lost(g: &GroupResults, seq: u32) -> bool {
    seq >= g.next_expected || g.gap_ranges.iter().any(|&(a, b)| (a..b).contains(&seq))
}

/// The packets, of the `packets` sent, that never reached the book.
pub fn lost_packets(g: &GroupResults, packets: u64) -> Vec<u32> {
    (1..=packets as u32).filter(|&s| was_lost(g, s)).collect()
}

/// Packets sent after the last one the arbiter saw: nothing came after
/// them to reveal the gap.
fn trailing(g: &GroupResults, packets: u64) -> u64 {
    (packets + 1).saturating_sub(g.next_expected as u64)
}

/// Pushes the feed's line and a line per failed balance, then the verdict;
/// returns whether every balance held.
pub fn check_balances(
    gen: &Generator,
    sent: &SendReport,
    end: &Ended,
    lost: &[u32],
    lines: &mut Vec<String>,
) -> bool {
    lines.push(feed_line(gen, sent, end));
    lines.push(streams_line(end));
    let checks = balances(gen, sent, end, lost);
    for (what, ok) in &checks {
        if !ok {
            lines.push(format!("balance FAILED: {what}"));
        }
    }
    let balance_ok = checks.iter().all(|c| c.1);
    lines.push(format!(
        "balance: {}",
        if balance_ok { "exact" } else { "FAILED" }
    ));
    balance_ok
}

/// What was sent, read, dropped, held and lost, and the orders.
fn feed_line(gen: &Generator, sent: &SendReport, end: &Ended) -> String {
    let (g, readers) = (&end.group, &end.readers);
    let n = sent.packets;
    let datagrams_sent = 2 * n;
    let lost_datagrams = datagrams_sent - readers.datagrams.min(datagrams_sent);
    format!(
        "feed: {n} packets ({} messages, {} events) in {:.2} s, sent on A and B = {datagrams_sent} datagrams; \
         read {} ({lost_datagrams} lost in the kernel), duplicates dropped {}, held for reordering {}, \
         gaps {} ({} packets, {} unseen at the end), malformed {}; orders {} sent, {} written",
        gen.log().total_messages(),
        gen.events(),
        sent.elapsed.as_secs_f64(),
        readers.datagrams,
        g.arbiter.duplicates,
        g.arbiter.held,
        g.arbiter.gaps,
        g.arbiter.gap_packets,
        trailing(g, n),
        g.decode_errors,
        g.orders,
        end.orders_written,
    )
}

/// The messages published on each of the six streams.
fn streams_line(end: &Ended) -> String {
    let (counts, _) = tally_records(&end.group.records);
    let parts: Vec<String> = streams()
        .iter()
        .zip(&counts)
        .map(|(id, n)| format!("{} {n}", id.name()))
        .collect();
    format!("streams: {}", parts.join(", "))
}

/// Every datagram, packet and message accounted for: (what, whether it
/// holds).
fn balances(
    gen: &Generator,
    sent: &SendReport,
    end: &Ended,
    lost: &[u32],
) -> [(&'static str, bool); 9] {
    let (g, readers) = (&end.group, &end.readers);
    let n = sent.packets;
    let lost_messages: u64 = lost.iter().map(|&s| gen.log().messages_in(s) as u64).sum();
    let delivered = tally(gen.log().message_streams(|seq| was_lost(g, seq)));
    let published = tally_records(&g.records);
    [
        (
            "datagrams: read = received by the group + refused at hand-off",
            readers.datagrams == g.received + readers.refused,
        ),
        (
            "datagrams: received = accepted + duplicates dropped + runts",
            g.received == g.arbiter.accepted + g.arbiter.duplicates + g.runts,
        ),
        (
            "packets: sent = accepted + counted gaps + unseen tail",
            n == g.arbiter.accepted + g.arbiter.gap_packets + trailing(g, n),
        ),
        (
            "packets: accepted = decoded + malformed",
            g.arbiter.accepted == g.packets + g.decode_errors,
        ),
        (
            "messages: sent = published + in lost packets",
            gen.log().total_messages() == g.messages + lost_messages,
        ),
        (
            "messages: on each of the six streams, sent less lost = published",
            delivered == published && published.1 == 0,
        ),
        (
            "records: one per published message",
            g.records.len() as u64 == g.messages,
        ),
        ("chain: no refused fast_send", g.chain_errors == 0),
        (
            "book: every entry applies (when nothing was lost)",
            g.book_refused == 0 || g.arbiter.gap_packets > 0,
        ),
    ]
}

/// The book the pipeline built must equal the generator's reference book,
/// rebuilt from its own entries minus the packets lost on both feeds
/// (`lost`, normally none). Pushes the verdict; returns whether it held.
pub fn check_book(
    gen: &Generator,
    g: &GroupResults,
    lost: &[u32],
    lines: &mut Vec<String>,
) -> bool {
    let reference = gen.log().replay(|seq| was_lost(g, seq));
    let book_ok = reference == g.book && (!lost.is_empty() || gen.reference() == g.book);
    lines.push(format!(
        "book check: {}{}",
        if book_ok { "identical" } else { "DIFFERENT" },
        if lost.is_empty() {
            String::new()
        } else {
            format!(" (reference without the {} lost packets)", lost.len())
        }
    ));
    book_ok
}
