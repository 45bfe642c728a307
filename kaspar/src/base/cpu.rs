//! Which CPU the calling thread runs on, and moving it off one.
//!
//! Linux places a thread it wakes with its waker's cache in mind, and may
//! put it on the waker's own CPU even when another CPU it may use is free. For
//! a pool worker woken by a thread that goes on running (a producer
//! streaming into a pooled actor, an asker spinning for its reply), that
//! is the one CPU where it cannot run: it waits for the waker to stop or
//! be preempted. So a worker woken on its waker's CPU steps off it
//! ([`step_off`], called from the pool's `worker`): the kernel moves a
//! thread at once when its affinity stops including the CPU it runs on.
//!
//! Linux only, and never under Miri or loom (no such system calls there):
//! elsewhere [`current`] is `None` and nothing moves.

/// The CPU the calling thread runs on now, if the OS says.
#[cfg(all(target_os = "linux", not(miri), not(loom)))]
#[inline]
pub(crate) fn current() -> Option<usize> {
    // SAFETY: `sched_getcpu` has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// The CPU the calling thread runs on now: not known here.
#[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
#[inline]
pub(crate) fn current() -> Option<usize> {
    None
}

/// Moves the calling thread off `cpu`, if it runs there, to another CPU
/// its affinity allows, provided it allows more than `busy` CPUs (the
/// caller's count of CPUs its peers keep busy, itself included): excludes
/// `cpu` from its affinity, which migrates it before the call returns,
/// then gives it back its affinity as it was (widening a thread's affinity
/// does not move it back). Returns the CPU it moved to; `None` when it
/// stayed (not on `cpu`, nowhere else to go, or the OS refused).
#[cfg(all(target_os = "linux", not(miri), not(loom)))]
pub(crate) fn step_off(cpu: usize, busy: usize) -> Option<usize> {
    use std::mem::size_of;
    if cpu >= libc::CPU_SETSIZE as usize || current() != Some(cpu) {
        return None;
    }
    let size = size_of::<libc::cpu_set_t>();
    // SAFETY: `cpu_set_t` is a plain bit array; all zeroes is the empty
    // set.
    let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `allowed` is a valid `cpu_set_t` of the size we pass; pid 0
    // is the calling thread.
    if unsafe { libc::sched_getaffinity(0, size, &mut allowed) } != 0 {
        return None;
    }
    // SAFETY: `allowed` is an initialised `cpu_set_t`.
    let count = usize::try_from(unsafe { libc::CPU_COUNT(&allowed) }).unwrap_or(0);
    if count <= busy.max(1) {
        // Every CPU it may use holds one of its peers (or it may use one).
        return None;
    }
    let mut elsewhere = allowed;
    // SAFETY: `cpu < CPU_SETSIZE` was checked above, so the bit is inside
    // the set.
    unsafe { libc::CPU_CLR(cpu, &mut elsewhere) };
    // SAFETY: as for `sched_getaffinity`; `elsewhere` is not empty (it
    // held more than one CPU, `cpu` among them).
    if unsafe { libc::sched_setaffinity(0, size, &elsewhere) } != 0 {
        return None;
    }
    let landed = current();
    // SAFETY: as above; `allowed` is the mask the thread had, which the OS
    // accepted for it then. Should the OS refuse it now (its cpuset was
    // changed meanwhile), the thread keeps every CPU of it but one.
    let _ = unsafe { libc::sched_setaffinity(0, size, &allowed) };
    landed.filter(|&c| c != cpu)
}

/// Moves the calling thread off `cpu`: not supported here.
#[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
pub(crate) fn step_off(_cpu: usize, _busy: usize) -> Option<usize> {
    None
}

#[cfg(all(test, target_os = "linux", not(miri), not(loom)))]
pub(crate) mod tests {
    use super::*;

    /// The CPUs the calling thread may use.
    pub(crate) fn allowed() -> Vec<usize> {
        // SAFETY: as in `step_off`.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: as in `step_off`.
        assert_eq!(unsafe { libc::sched_getaffinity(0, size, &mut set) }, 0);
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `c < CPU_SETSIZE`, a bit inside `set`.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect()
    }

    pub(crate) fn pin(cpus: &[usize]) {
        // SAFETY: as in `step_off`.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus {
            // SAFETY: `c` came from `allowed`, below `CPU_SETSIZE`.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: as in `step_off`.
        assert_eq!(unsafe { libc::sched_setaffinity(0, size, &set) }, 0);
    }

    #[test]
    fn a_thread_steps_off_its_cpu_and_keeps_its_affinity() {
        std::thread::spawn(|| {
            let cpus = allowed();
            let here = current().unwrap();
            // Its peers fill every CPU it may use: it stays.
            assert_eq!(step_off(here, cpus.len()), None);
            assert_eq!(allowed(), cpus);
            if cpus.len() < 2 {
                // One CPU: nowhere to go.
                assert_eq!(step_off(here, 0), None);
                return;
            }
            // Retried: the kernel may move an unpinned thread between the
            // test's look at its CPU and `step_off`'s, which then finds it
            // elsewhere and leaves it there.
            let (from, to) = (0..1000)
                .find_map(|_| {
                    let here = current()?;
                    step_off(here, 1).map(|to| (here, to))
                })
                .expect("stepped off within 1000 tries");
            assert_ne!(from, to);
            assert!(cpus.contains(&to), "{to} is one of {cpus:?}");
            assert_eq!(allowed(), cpus, "its affinity given back");
            // Pinned to one CPU: it stays, and is never moved off another.
            let (a, b) = (cpus[0], cpus[1]);
            pin(&[a]);
            assert_eq!(step_off(a, 0), None);
            assert_eq!(step_off(b, 0), None, "not on that CPU");
            assert_eq!(allowed(), vec![a]);
        })
        .join()
        .unwrap();
    }
}
