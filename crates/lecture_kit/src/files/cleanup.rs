//! Temporaries removed when the run is interrupted.
//!
//! A temporary file is removed when its `tempfile::NamedTempFile` is dropped, on success
//! (renamed) and on error alike. SIGINT, SIGTERM and SIGHUP end the process without
//! dropping anything, so every live temporary is also registered here: before the first
//! temporary is made, a thread starts that waits for those signals, removes every
//! registered temporary, and then lets the signal do what it would have done (the process
//! ends by it, its exit status saying which). A signal the process ignores (SIGHUP under
//! `nohup`) stays ignored. Elsewhere than Unix there is no such thread; a temporary left
//! by an interrupted run is a hidden `.NAME.XXXXXX.tmp` beside the file.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporaries alive now.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A registered temporary; unregistered when dropped.
pub(super) struct Registered(PathBuf);

/// Registers `path` until the returned value is dropped.
pub(super) fn register(path: &Path) -> Registered {
    watch_signals();
    live().push(path.to_path_buf());
    Registered(path.to_path_buf())
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut live = live();
        if let Some(i) = live.iter().position(|p| *p == self.0) {
            live.swap_remove(i);
        }
    }
}

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Starts the thread that removes the temporaries on SIGINT, SIGTERM or SIGHUP, once per
/// process; called before a temporary is made, so that none exists unwatched.
#[cfg(unix)]
pub(super) fn watch_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let ignored = ignored_signals();
        let watched: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
            .into_iter()
            .filter(|&s| ignored & (1 << (s - 1)) == 0)
            .collect();
        // Registering fails only for a signal the process may not catch; then the
        // temporaries are removed as before, on drop.
        let Ok(mut signals) = signal_hook::iterator::Signals::new(&watched) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Held until the process ends: no temporary is registered after the sweep.
                let mut live = live();
                for path in live.drain(..) {
                    let _ = std::fs::remove_file(path);
                }
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    });
}

/// The signals this process ignores: the mask `SigIgn` of `/proc/self/status` (bit
/// `n − 1` for signal `n`); none where the file cannot be read.
#[cfg(unix)]
fn ignored_signals() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:"));
    mask.and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .unwrap_or(0)
}

#[cfg(not(unix))]
pub(super) fn watch_signals() {}
