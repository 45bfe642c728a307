//! A/B line arbitration over two redundant feeds: the first copy of each
//! sequence number wins, packets go on strictly in sequence order, and a
//! hole waits at most [`ARBITRATION_WINDOW`] packets for the other feed to
//! fill it before it is counted as a gap.

/// Packets the arbiter holds while it waits for a missing one.
pub const ARBITRATION_WINDOW: u32 = 32;

/// Counters of [`Arbiter`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ArbiterStats {
    /// Packets passed on (each sequence number at most once, in order).
    pub accepted: u64,
    /// Datagrams dropped as already seen.
    pub duplicates: u64,
    /// Packets that arrived ahead of a missing one and waited for it.
    pub held: u64,
    /// Packets declared lost on both feeds (sequence numbers skipped).
    pub gap_packets: u64,
    /// Gaps (runs of skipped sequence numbers).
    pub gaps: u64,
}

/// A/B line arbitration: the first copy of each sequence number wins, and
/// packets go on strictly in sequence order.
///
/// A packet that arrives ahead of a missing one is held (up to
/// [`ARBITRATION_WINDOW`] sequence numbers ahead) while the other feed has
/// the chance to fill the hole, as it normally does within microseconds.
/// The hole is declared a gap only when a packet arrives beyond the window,
/// or on [`flush`](Arbiter::flush); a copy that shows up after that is a
/// duplicate. (A real handler would then recover from a snapshot.) Holding
/// costs no allocation: the window is a fixed array.
#[derive(Debug)]
pub struct Arbiter<T> {
    next: u32,
    window: [Option<(u32, T)>; ARBITRATION_WINDOW as usize],
    held_now: u32,
    stats: ArbiterStats,
    gap_ranges: Vec<(u32, u32)>,
}

impl<T> Default for Arbiter<T> {
    fn default() -> Self {
        Arbiter {
            next: 1,
            window: std::array::from_fn(|_| None),
            held_now: 0,
            stats: ArbiterStats::default(),
            gap_ranges: Vec::new(),
        }
    }
}

impl<T> Arbiter<T> {
    /// Offers the packet `seq` carrying `item`; `pass` receives every
    /// packet that can now go on, in sequence order.
    #[inline]
    pub fn offer(&mut self, seq: u32, item: T, mut pass: impl FnMut(T)) {
        if seq < self.next {
            self.stats.duplicates += 1;
            return;
        }
        if seq == self.next {
            self.stats.accepted += 1;
            self.next += 1;
            pass(item);
            self.release(&mut pass);
            return;
        }
        // Beyond the window: give up on the oldest holes until it fits.
        while seq - self.next >= ARBITRATION_WINDOW {
            self.skip_one(&mut pass);
        }
        if seq == self.next {
            self.stats.accepted += 1;
            self.next += 1;
            pass(item);
        } else {
            let slot = &mut self.window[(seq % ARBITRATION_WINDOW) as usize];
            // Every held seq lies in next+1 .. next+WINDOW, one per slot.
            if slot.is_some() {
                self.stats.duplicates += 1;
                return;
            }
            *slot = Some((seq, item));
            self.held_now += 1;
            self.stats.held += 1;
        }
        self.release(&mut pass);
    }

    /// Declares every hole before a held packet lost and passes the held
    /// packets on: the end of a run, or a timeout.
    pub fn flush(&mut self, mut pass: impl FnMut(T)) {
        while self.held_now > 0 {
            self.skip_one(&mut pass);
            self.release(&mut pass);
        }
    }

    /// Advances past `next`: passes it on if held, else declares it lost.
    fn skip_one(&mut self, pass: &mut impl FnMut(T)) {
        let slot = &mut self.window[(self.next % ARBITRATION_WINDOW) as usize];
        match slot.take() {
            Some((_, item)) => {
                self.held_now -= 1;
                self.stats.accepted += 1;
                pass(item);
            }
            None => {
                self.stats.gap_packets += 1;
                match self.gap_ranges.last_mut() {
                    Some(r) if r.1 == self.next => r.1 += 1,
                    _ => {
                        self.stats.gaps += 1;
                        self.gap_ranges.push((self.next, self.next + 1));
                    }
                }
            }
        }
        self.next += 1;
    }

    fn release(&mut self, pass: &mut impl FnMut(T)) {
        while self.held_now > 0 {
            let slot = &mut self.window[(self.next % ARBITRATION_WINDOW) as usize];
            match slot.take() {
                Some((_, item)) => {
                    self.held_now -= 1;
                    self.stats.accepted += 1;
                    self.next += 1;
                    pass(item);
                }
                None => break,
            }
        }
    }

    /// The next sequence number expected.
    pub fn next_expected(&self) -> u32 {
        self.next
    }

    /// Packets held right now.
    pub fn holding(&self) -> u32 {
        self.held_now
    }

    /// The counters.
    pub fn stats(&self) -> ArbiterStats {
        self.stats
    }

    /// The sequence numbers declared lost, as half-open ranges.
    pub fn gap_ranges(&self) -> &[(u32, u32)] {
        &self.gap_ranges
    }
}
