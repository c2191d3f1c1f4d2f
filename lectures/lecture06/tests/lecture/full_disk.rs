//! A full disk never leaves a half-written or clobbered file: `--out`, `--format csv --out`
//! and `--plot` into a 64 KiB tmpfs (mounted for the test where the machine allows it, as
//! root on Linux; the test says SKIPPED otherwise) exit 1 naming the file, and leave the
//! folder as it was (a file with a second name, rewritten in place, with its old content
//! put back).

use crate::run;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use run::{lecture06, stderr};

/// A small tmpfs at a fresh path, unmounted when dropped; `None` where mounting fails.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(kib: u32) -> Option<Tmpfs> {
        let dir = std::env::temp_dir().join(format!("lecture06-full-{}", std::process::id()));
        fs::create_dir_all(&dir).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(&dir)
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            Some(Tmpfs(dir))
        } else {
            let _ = fs::remove_dir(&dir);
            None
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = fs::remove_dir(&self.0);
    }
}

/// The folder's files and their bytes.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = if e.path().is_file() {
                fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    all.sort();
    all
}

/// Runs `args`, expects exit 1 naming the file and the folder unchanged; returns the
/// error line.
fn fails_cleanly(args: &[&str], dir: &Path, names: &str) -> String {
    let before = contents(dir);
    let o = lecture06(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert!(
        err.contains(names),
        "{args:?}: the error names the file: {err}"
    );
    let after = contents(dir);
    let sizes = |c: &[(String, Vec<u8>)]| {
        c.iter()
            .map(|(n, b)| (n.clone(), b.len()))
            .collect::<Vec<_>>()
    };
    assert!(
        after == before,
        "{args:?}: the folder changed: {:?} → {:?}",
        sizes(&before),
        sizes(&after)
    );
    err
}

#[test]
fn a_full_disk_leaves_no_partial_or_clobbered_file() {
    let Some(fs_) = Tmpfs::mount(64) else {
        #[allow(clippy::print_stderr)] // a skipped test says so where cargo test shows it
        {
            eprintln!("SKIPPED: cannot mount a tmpfs here (needs root on Linux)");
        }
        return;
    };
    let root = &fs_.0;
    // A good page that fits: 8 KiB of an earlier run's output.
    let page = root.join("page.html");
    fs::write(&page, vec![b'x'; 8 << 10]).unwrap();
    // The whole lecture as JSON is ~87 KB: more than the disk holds.
    let out = page.to_str().unwrap();
    let first = fails_cleanly(&["--format", "json", "--out", out], root, "page.html");
    // The same words every run: no temporary's random name in them.
    let again = fails_cleanly(&["--format", "json", "--out", out], root, "page.html");
    assert_eq!(first, again);
    let _ = fails_cleanly(&["--format", "html", "--out", out], root, "page.html");
    // A file with a second name is rewritten in place (both names see the new bytes):
    // the old code truncated it first, and a full disk left both names holding 61,440
    // bytes of broken JSON. Its old content is now put back.
    let linked = root.join("h");
    fs::write(&linked, "old\n").unwrap();
    fs::hard_link(&linked, root.join("h2")).unwrap();
    let h = linked.to_str().unwrap();
    let _ = fails_cleanly(&["--format", "json", "--out", h], root, "put back");
    fs::remove_file(root.join("h2")).unwrap();
    fs::remove_file(&linked).unwrap();
    let csv = root.join("csv");
    fs::create_dir(&csv).unwrap();
    // Leave 8 KiB (two tmpfs pages): five CSV files and their list do not fit.
    fs::write(root.join("filler"), vec![0u8; 48 << 10]).unwrap();
    let _ = fails_cleanly(
        &["--format", "csv", "--out", csv.to_str().unwrap()],
        &csv,
        ".csv",
    );
    let _ = fails_cleanly(&["--plot", csv.to_str().unwrap()], &csv, ".svg");
    assert_eq!(
        fs::read(&page).unwrap(),
        vec![b'x'; 8 << 10],
        "the good file is untouched"
    );
}
