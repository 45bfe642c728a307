//! The media driver (embedded or external) and the Aeron client on it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use std::ffi::CString;

use rusteron_client::{Aeron, AeronContext};
use rusteron_media_driver::{AeronDriver, AeronDriverContext, AeronIdleStrategyKind};

use super::config::{AeronConfig, DriverIdle, DriverMode};
use crate::link::LinkError;

/// Aeron's own default for how often a client tells the driver it is alive.
const DEFAULT_KEEPALIVE: Duration = Duration::from_millis(500);

/// Aeron's own default for how often the driver checks its timeouts.
const DEFAULT_TIMER_INTERVAL: Duration = Duration::from_secs(1);

/// Aeron's own default for how long a closed publication lingers.
const DEFAULT_LINGER: Duration = Duration::from_secs(5);

/// The most the client waits for the driver to answer at start.
const DRIVER_TIMEOUT: Duration = Duration::from_secs(10);

/// A media driver running inside this process on its own thread (Aeron's
/// shared threading mode: conductor, sender and receiver on one thread).
/// Dropping it stops the thread and deletes the driver's directory.
pub(crate) struct EmbeddedDriver {
    // Dropping the last handle calls `aeron_driver_close`, which stops and
    // joins the driver's thread.
    _driver: AeronDriver,
}

impl EmbeddedDriver {
    /// Starts a driver in `dir` with the timeouts `config` asks for.
    pub(crate) fn launch(dir: &Path, config: &AeronConfig) -> Result<Self, LinkError> {
        let dir = c_string(&dir.to_string_lossy())?;
        let ctx = AeronDriverContext::new().map_err(|e| engine("driver context", e))?;
        configure_driver(&ctx, &dir, config).map_err(|e| engine("driver settings", e))?;
        let driver = AeronDriver::new(&ctx).map_err(|e| engine("driver init", e))?;
        // `false`: the driver runs its agents on threads of its own.
        driver.start(false).map_err(|e| engine("driver start", e))?;
        Ok(EmbeddedDriver { _driver: driver })
    }
}

fn configure_driver(
    ctx: &AeronDriverContext,
    dir: &CString,
    config: &AeronConfig,
) -> Result<(), rusteron_media_driver::AeronCError> {
    let liveness = nanos(config.liveness);
    ctx.set_dir(dir)?;
    ctx.set_dir_delete_on_start(true)?;
    ctx.set_dir_delete_on_shutdown(true)?;
    ctx.set_threading_mode(
        rusteron_media_driver::bindings::aeron_threading_mode_enum::AERON_THREADING_MODE_SHARED,
    )?;
    ctx.set_shared_idle_strategy_kind(match config.driver_idle {
        DriverIdle::Backoff => AeronIdleStrategyKind::Backoff,
        DriverIdle::BusySpin => AeronIdleStrategyKind::BusySpin,
    })?;
    // A dead client (its process killed) is dropped after `liveness`, and
    // with it its subscriptions: publications to them stop being connected.
    ctx.set_client_liveness_timeout_ns(liveness)?;
    // A UDP receiver that stops sending status messages (its host or process
    // died) disconnects the publication after `liveness`; a silent sender's
    // image goes away after `liveness`.
    ctx.set_publication_connection_timeout_ns(liveness)?;
    ctx.set_image_liveness_timeout_ns(liveness)?;
    ctx.set_flow_control_receiver_timeout_ns(liveness)?;
    // The timeouts above are checked on the driver's timer: often enough
    // that a loss is seen within about `liveness`, not `liveness` + 1 s.
    ctx.set_timer_interval_ns(nanos((config.liveness / 10).min(DEFAULT_TIMER_INTERVAL)))?;
    ctx.set_publication_linger_timeout_ns(nanos(config.liveness.min(DEFAULT_LINGER)))?;
    // Aeron requires the unblock timeout to exceed the client liveness.
    ctx.set_publication_unblock_timeout_ns(liveness.saturating_mul(3))?;
    if let Some(term) = config.term_length {
        ctx.set_term_buffer_length(term)?;
        ctx.set_ipc_term_buffer_length(term)?;
    }
    Ok(())
}

/// Connects an Aeron client to the driver in `dir`.
///
/// The client's conductor runs on a thread of its own and sends keepalives
/// often enough for the configured liveness. Asynchronous errors (a
/// channel the driver refused, ...) land in `errors`.
pub(crate) fn connect_client(
    dir: &Path,
    config: &AeronConfig,
    errors: &Arc<Mutex<Option<String>>>,
) -> Result<Aeron, LinkError> {
    let dir = c_string(&dir.to_string_lossy())?;
    let ctx = AeronContext::new().map_err(|e| engine("client context", e))?;
    let keepalive = (config.liveness / 5).min(DEFAULT_KEEPALIVE);
    let sink = Arc::clone(errors);
    let setup = || -> Result<(), rusteron_client::AeronCError> {
        ctx.set_dir(&dir)?;
        ctx.set_keepalive_interval_ns(nanos(keepalive))?;
        ctx.set_driver_timeout_ms(DRIVER_TIMEOUT.as_millis() as u64)?;
        ctx.set_error_handler(Some(move |code: i32, message: &str| {
            let mut last = sink.lock().unwrap_or_else(|e| e.into_inner());
            *last = Some(format!("{message} (code {code})"));
        }))?;
        Ok(())
    };
    setup().map_err(|e| engine("client settings", e))?;
    let aeron = Aeron::new(&ctx).map_err(|e| engine("client (is a media driver running?)", e))?;
    aeron.start().map_err(|e| engine("client start", e))?;
    Ok(aeron)
}

/// The directory of the driver `mode` names; a fresh one for an embedded
/// driver without a directory of its own.
pub(crate) fn driver_dir(mode: &DriverMode) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    match mode {
        DriverMode::Embedded { dir: Some(dir) } | DriverMode::External { dir } => dir.clone(),
        DriverMode::Embedded { dir: None } => {
            let shm = Path::new("/dev/shm");
            let base = if shm.is_dir() {
                shm.to_path_buf()
            } else {
                std::env::temp_dir()
            };
            sweep_dead(&base);
            let stamp = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            base.join(format!(
                "kaspar-aeron-{}-{}-{stamp}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ))
        }
    }
}

/// Removes the directories of embedded drivers whose process is gone.
///
/// A driver deletes its directory when it shuts down, but a process that
/// was killed (the failure tests do it on purpose) leaves its log buffers
/// behind in `/dev/shm`, which is memory. Only directories this transport
/// names (`kaspar-aeron-<pid>-...`) are touched, and only when `/proc` says
/// the pid is not running; on systems without `/proc` nothing is removed.
fn sweep_dead(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("kaspar-aeron-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            // Best effort: another process may be sweeping the same entry.
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// An engine failure in Aeron's own words.
pub(crate) fn engine(what: &str, error: impl std::fmt::Display) -> LinkError {
    LinkError::Transport(format!("aeron {what}: {error} ({})", Aeron::errmsg()))
}

/// `text` for the C API; a NUL inside it is a clear error.
pub(crate) fn c_string(text: &str) -> Result<CString, LinkError> {
    CString::new(text).map_err(|_| LinkError::Transport(format!("{text:?} contains a NUL byte")))
}
