//! Dropping and running user code where an unwind must not escape: the
//! runtime's threads (run loops, the timer thread) and the paths that act
//! after a panic (supervision, dead letters) call the user's destructors and
//! closures through here.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// How many panics in a row [`drop_quietly`] catches from one value before
/// it leaks what is left: a payload whose destructor panics with a payload
/// whose destructor panics, and so on, must not loop forever.
const MAX_DROP_PANICS: u32 = 8;

/// Drops `value` and returns how many panics its destructor (and the
/// destructors of what those panics carried) raised and this caught.
///
/// The runtime drops user values (messages, panic payloads, states) in
/// places where an unwinding destructor would otherwise escape a run loop
/// or an entry half done: every such drop goes through here. A panic
/// payload is itself a user value, so it is dropped the same way, up to
/// [`MAX_DROP_PANICS`] deep; past that the last payload is leaked.
pub(crate) fn drop_quietly<T>(value: T) -> u32 {
    let mut next = catch_unwind(AssertUnwindSafe(move || drop(value))).err();
    let mut panics = 0;
    while let Some(payload) = next {
        panics += 1;
        if panics >= MAX_DROP_PANICS {
            std::mem::forget(payload);
            break;
        }
        next = catch_unwind(AssertUnwindSafe(move || drop(payload))).err();
    }
    panics
}

/// Runs `f`; if it panics, drops the payload quietly and returns `None`.
pub(crate) fn quietly<R>(f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) => {
            drop_quietly(payload);
            None
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Panics when dropped, with a payload that is another `Bomb` while
    /// `depth` lasts.
    struct Bomb(u32);

    impl Drop for Bomb {
        fn drop(&mut self) {
            if self.0 > 0 {
                std::panic::panic_any(Bomb(self.0 - 1));
            }
        }
    }

    #[test]
    fn a_panicking_destructor_and_its_panicking_payloads_are_caught() {
        assert_eq!(drop_quietly(Bomb(0)), 0);
        assert_eq!(drop_quietly(Bomb(3)), 3);
        // Past the bound the last payload is leaked on purpose, which Miri
        // (rightly) reports as a leak: checked outside Miri only.
        if !cfg!(miri) {
            assert_eq!(
                drop_quietly(Bomb(100)),
                MAX_DROP_PANICS,
                "leaks past the bound"
            );
        }
        assert_eq!(quietly(|| -> u8 { std::panic::panic_any(Bomb(2)) }), None);
        assert_eq!(quietly(|| 7), Some(7));
    }
}
