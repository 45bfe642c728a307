//! Feeds arbitrary bytes to the tick_to_book decoder and book: parse,
//! walk every message and entry, apply each to a book. Must never panic
//! (the decoder's contract), and a packet that parses must yield exactly
//! the messages and entries it declared (asserted inside `exercise`).
#![no_main]

use kaspar_suite::tick_to_book::feed;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut book = feed::Book::new(&[5602, 3141, 7921]);
    let _ = feed::exercise(data, &mut book);
});
