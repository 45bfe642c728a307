//! The machine header every report starts with: CPU model, cores, and
//! whether the process was pinned.

/// What the numbers were measured on.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Cores this process may run on.
    pub cores: usize,
    /// The CPU model from `/proc/cpuinfo`, or `unknown`.
    pub cpu: String,
    /// CPUs this process may run on (`Cpus_allowed_list`), or `unknown`.
    pub allowed: String,
    /// CPUs online in the machine, or `unknown`.
    pub online: String,
}

impl Machine {
    /// Reads this process's machine from `/proc` and `/sys`; a field that
    /// cannot be read is `unknown` (1 for the cores).
    pub fn detect() -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        let allowed = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Cpus_allowed_list"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".to_string());
        Machine {
            cores,
            cpu,
            allowed,
            online,
        }
    }

    /// Whether the process was confined (`taskset`, cgroup cpuset) to fewer
    /// CPUs than are online. The benches never pin their own threads.
    pub fn pinned(&self) -> bool {
        self.allowed != self.online && self.allowed != "unknown"
    }

    /// The header line with the pinning stated: model, cores, pinned or not.
    pub fn header_pinned(&self) -> String {
        let pinning = if self.pinned() {
            format!(
                "process pinned to CPUs {} (of {})",
                self.allowed, self.online
            )
        } else {
            format!("not pinned (threads float over CPUs {})", self.online)
        };
        format!("_{} cores, {}, {pinning}_", self.cores, self.cpu)
    }

    /// One markdown line naming the machine.
    pub fn header(&self) -> String {
        format!("_{} cores, {}_", self.cores, self.cpu)
    }
}
