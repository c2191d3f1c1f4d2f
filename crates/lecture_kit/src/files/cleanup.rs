//! Temporaries removed when the run is interrupted.
//!
//! A temporary file is removed when its `tempfile::NamedTempFile` is dropped, on success
//! (renamed) and on error alike. SIGINT, SIGTERM and SIGHUP end the process without
//! dropping anything, so every live temporary is also registered here: the first one
//! starts a thread that waits for those signals, removes every registered temporary, and
//! then lets the signal do what it would have done (the process ends by it, its exit
//! status saying which). Elsewhere than Unix there is no such thread; a temporary left by
//! an interrupted run is a hidden `.NAME.XXXXXX.tmp` beside the file.

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

#[cfg(unix)]
fn watch_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        // Registering fails only for a signal the process may not catch; then the
        // temporaries are removed as before, on drop.
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                for path in live().drain(..) {
                    let _ = std::fs::remove_file(path);
                }
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    });
}

#[cfg(not(unix))]
fn watch_signals() {}
