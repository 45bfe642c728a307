//! Thread placement: which CPUs an actor's (or a group's) thread may run
//! on, and whether it runs under the real-time FIFO scheduler.
//!
//! Placement is applied by the thread itself before its first handler.
//! The operating system may refuse it (no such CPU, or no permission for a
//! real-time priority without `CAP_SYS_NICE`); a refusal is recorded in the
//! [`PlacementOutcome`], never a panic, and the thread runs unplaced.
//! Off Linux, every request is reported as unsupported.

use std::fmt;
use std::io;

/// Where a thread should run. Empty by default: leave it to the OS.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    cpus: Vec<usize>,
    fifo_priority: Option<i32>,
}

impl Placement {
    /// No placement.
    pub fn new() -> Self {
        Self::default()
    }

    /// Pins the thread to one CPU.
    pub fn pin(self, cpu: usize) -> Self {
        self.cpus([cpu])
    }

    /// Restricts the thread to a set of CPUs.
    pub fn cpus(mut self, cpus: impl IntoIterator<Item = usize>) -> Self {
        self.cpus = cpus.into_iter().collect();
        self
    }

    /// Runs the thread under `SCHED_FIFO` at `priority` (1..=99 on Linux).
    pub fn fifo(mut self, priority: i32) -> Self {
        self.fifo_priority = Some(priority);
        self
    }

    /// Whether nothing is requested.
    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty() && self.fifo_priority.is_none()
    }

    /// Applies the placement to the calling thread.
    pub fn apply_to_current_thread(&self) -> PlacementOutcome {
        PlacementOutcome {
            affinity: (!self.cpus.is_empty()).then(|| os::set_affinity(&self.cpus)),
            priority: self.fifo_priority.map(os::set_fifo),
        }
    }
}

/// What the OS did with a [`Placement`]: `None` where nothing was asked.
#[derive(Debug)]
pub struct PlacementOutcome {
    /// The CPU affinity request.
    pub affinity: Option<io::Result<()>>,
    /// The `SCHED_FIFO` request.
    pub priority: Option<io::Result<()>>,
}

impl PlacementOutcome {
    /// Whether everything requested was applied.
    pub fn is_ok(&self) -> bool {
        self.affinity.as_ref().is_none_or(|r| r.is_ok())
            && self.priority.as_ref().is_none_or(|r| r.is_ok())
    }
}

impl fmt::Display for PlacementOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |r: &Option<io::Result<()>>| match r {
            None => "not requested".to_string(),
            Some(Ok(())) => "applied".to_string(),
            Some(Err(e)) => format!("refused ({e})"),
        };
        write!(
            f,
            "affinity: {}, priority: {}",
            show(&self.affinity),
            show(&self.priority)
        )
    }
}

#[cfg(target_os = "linux")]
mod os {
    use std::io;

    pub(super) fn set_affinity(cpus: &[usize]) -> io::Result<()> {
        let limit = libc::CPU_SETSIZE as usize;
        if let Some(&bad) = cpus.iter().find(|&&c| c >= limit) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {bad} is beyond the OS limit of {limit}"),
            ));
        }
        // SAFETY: `cpu_set_t` is a plain bit array; all zeroes is the empty
        // set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in cpus {
            // SAFETY: `cpu < CPU_SETSIZE` was checked above, so the bit is
            // inside `set`.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        // SAFETY: `set` is a valid, initialised `cpu_set_t` of the size we
        // pass; pid 0 is the calling thread.
        let rc =
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    pub(super) fn set_fifo(priority: i32) -> io::Result<()> {
        let param = libc::sched_param {
            sched_priority: priority,
        };
        // SAFETY: `param` is a valid `sched_param`; pid 0 is the calling
        // thread.
        let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    use std::io;

    pub(super) fn set_affinity(_cpus: &[usize]) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "CPU affinity is implemented for Linux only",
        ))
    }

    pub(super) fn set_fifo(_priority: i32) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "SCHED_FIFO is implemented for Linux only",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_requested_is_ok_and_says_so() {
        let out = Placement::new().apply_to_current_thread();
        assert!(out.is_ok());
        assert_eq!(
            out.to_string(),
            "affinity: not requested, priority: not requested"
        );
    }

    #[test]
    fn an_impossible_cpu_is_refused_not_a_panic() {
        let out = std::thread::spawn(|| Placement::new().pin(1 << 20).apply_to_current_thread())
            .join()
            .unwrap();
        assert!(!out.is_ok());
        assert!(out.to_string().starts_with("affinity: refused"), "{out}");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn pinning_to_an_allowed_cpu_applies() {
        let out = std::thread::spawn(|| {
            // SAFETY: `sched_getcpu` has no preconditions.
            let here = unsafe { libc::sched_getcpu() };
            let here = usize::try_from(here).expect("sched_getcpu works on Linux");
            // the CPU this thread runs on is one it is allowed on
            Placement::new().pin(here).apply_to_current_thread()
        })
        .join()
        .unwrap();
        assert!(matches!(out.affinity, Some(Ok(()))), "{out}");
    }
}
