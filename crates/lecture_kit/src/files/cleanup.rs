//! Temporaries removed when the run is interrupted.
//!
//! A temporary file is removed when its `tempfile::NamedTempFile` is dropped, on success
//! (renamed) and on error alike. SIGINT, SIGTERM and SIGHUP end the process without
//! dropping anything, so every live temporary is also registered here: before the first
//! temporary is made, a thread starts that waits for those signals, removes every
//! registered temporary, and then lets the signal do what it would have done (the process
//! ends by it, its exit status saying which). A signal the process ignores (SIGHUP under
//! `nohup`) stays ignored. While files are put in place ([`commit`]: a folder's renames,
//! a file rewritten in place) the sweep waits, so the signal ends the run after them.
//! Elsewhere than Unix there is no such thread; a temporary left by an interrupted run is
//! a hidden `.NAME.XXXXXX.tmp` beside the file.

use std::path::PathBuf;
use std::sync::Mutex;

/// The temporaries alive now.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Held while files are put in place (a folder's renames, a file rewritten in place): a
/// signal's sweep waits for it, so an interrupted run ends with all of them in place or
/// none, never some.
static COMMIT: Mutex<()> = Mutex::new(());

/// Holds off SIGINT, SIGTERM and SIGHUP until the returned guard is dropped: take it
/// before the first of several steps that must all happen (a few renames, a rewrite), and
/// keep it short. Lock order: this before the temporaries' list.
pub(super) fn commit() -> std::sync::MutexGuard<'static, ()> {
    watch_signals();
    COMMIT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A registered temporary; unregistered when dropped.
pub(super) struct Registered(PathBuf);

/// A temporary made by `make` and registered until the returned value is dropped: made
/// while the list is held, so that a signal's sweep finds it either not yet made or
/// registered, never unlisted on disk.
pub(super) fn made(
    make: impl FnOnce() -> std::io::Result<tempfile::NamedTempFile>,
) -> std::io::Result<(tempfile::NamedTempFile, Registered)> {
    watch_signals();
    let mut live = live();
    let tmp = make()?;
    live.push(tmp.path().to_path_buf());
    let registered = Registered(tmp.path().to_path_buf());
    Ok((tmp, registered))
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
                // Both held until the process ends: what is being put in place is first
                // put in place, and no temporary is registered after the sweep.
                let _commit = COMMIT
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
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
