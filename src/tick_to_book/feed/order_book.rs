//! The market-by-price book: per instrument, up to [`DEPTH`] levels a side
//! (best first) and a trade summary. An entry is applied whole or not at
//! all: on a [`BookError`] the book is unchanged.

use super::wire::{Action, Entry, Side, DEPTH};

/// One price level.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct Level {
    /// Price in units of 1e-9.
    pub price: i64,
    /// Quantity.
    pub size: i32,
}

/// One side of an instrument's book: up to [`DEPTH`] levels, best first.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct Ladder {
    levels: [Level; DEPTH],
    len: u8,
}

impl Ladder {
    /// The levels, best first.
    pub fn levels(&self) -> &[Level] {
        &self.levels[..self.len as usize]
    }

    /// The best level, if any.
    pub fn best(&self) -> Option<Level> {
        self.levels().first().copied()
    }

    fn apply(&mut self, level: u8, action: Action, lvl: Level) -> Result<(), BookError> {
        let i = level as usize;
        let len = self.len as usize;
        if i == 0 || i > DEPTH {
            return Err(BookError::BadLevel);
        }
        let i = i - 1;
        match action {
            Action::New => {
                if i > len {
                    return Err(BookError::BadLevel);
                }
                // A level pushed past the depth falls off, as on CME.
                let keep = len.min(DEPTH - 1);
                self.levels.copy_within(i..keep, i + 1);
                self.levels[i] = lvl;
                self.len = (keep + 1) as u8;
            }
            Action::Change => {
                if i >= len {
                    return Err(BookError::BadLevel);
                }
                self.levels[i] = lvl;
            }
            Action::Delete => {
                if i >= len {
                    return Err(BookError::BadLevel);
                }
                self.levels.copy_within(i + 1..len, i);
                self.levels[len - 1] = Level::default();
                self.len -= 1;
            }
        }
        Ok(())
    }
}

/// One instrument's book and trade tape summary.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Hash)]
pub struct Instrument {
    /// The instrument.
    pub security_id: i32,
    /// Bid levels, best (highest) first.
    pub bids: Ladder,
    /// Ask levels, best (lowest) first.
    pub asks: Ladder,
    /// Price and size of the last trade.
    pub last_trade: Option<Level>,
    /// Trades seen.
    pub trades: u64,
    /// Quantity traded.
    pub volume: i64,
}

/// Why an entry was not applied. The book is unchanged.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BookError {
    /// No such instrument in this book.
    UnknownSecurity,
    /// A level outside `1..=DEPTH`, or past the side's current depth.
    BadLevel,
}

/// Market-by-price books for a fixed set of instruments.
#[derive(Clone, PartialEq, Eq, Debug, Hash)]
pub struct Book {
    instruments: Vec<Instrument>,
}

impl Book {
    /// Empty books for `security_ids`.
    pub fn new(security_ids: &[i32]) -> Self {
        Book {
            instruments: security_ids
                .iter()
                .map(|&security_id| Instrument {
                    security_id,
                    ..Instrument::default()
                })
                .collect(),
        }
    }

    /// Every instrument, in construction order.
    pub fn instruments(&self) -> &[Instrument] {
        &self.instruments
    }

    /// The instrument with `security_id`.
    pub fn instrument(&self, security_id: i32) -> Option<&Instrument> {
        self.instruments
            .iter()
            .find(|i| i.security_id == security_id)
    }

    /// Applies one entry. On error the book is unchanged.
    pub fn apply(&mut self, entry: &Entry) -> Result<(), BookError> {
        let id = entry.security_id();
        let inst = self
            .instruments
            .iter_mut()
            .find(|i| i.security_id == id)
            .ok_or(BookError::UnknownSecurity)?;
        match *entry {
            Entry::Book(e) => {
                let ladder = match e.side {
                    Side::Bid => &mut inst.bids,
                    Side::Ask => &mut inst.asks,
                };
                ladder.apply(
                    e.level,
                    e.action,
                    Level {
                        price: e.price,
                        size: e.size,
                    },
                )
            }
            Entry::Trade(t) => {
                inst.last_trade = Some(Level {
                    price: t.price,
                    size: t.size,
                });
                inst.trades += 1;
                inst.volume += t.size as i64;
                Ok(())
            }
        }
    }
}
