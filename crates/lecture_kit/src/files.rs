//! Output files: written whole, nothing replaced that is not a file, nothing left behind.
//!
//! A lecture's `--out FILE`, `--format csv --out DIR` and `--plot DIR` never leave a
//! truncated file (text cut mid-character, JSON that does not parse, an SVG without its
//! end tag) and never replace a good file with a bad one. What happens at a path depends on
//! what stands there:
//!
//! | at the path | written how |
//! |---|---|
//! | nothing, or a regular file | a temporary with a random name, created exclusively in the same folder (never following a link planted at its name), flushed to disk and renamed over the path; the old file's mode and owner are kept |
//! | a regular file with other names (hard links), or one whose owner the new file cannot be given | in place, so every name sees the new bytes and the owner stays: the old content is first copied aside (`.NAME.XXXXXX.old`, readable by its owner only), put back if the write fails part way, and removed once the new content is whole; where no copy can be made, nothing is written |
//! | a symbolic link | the file it leads to, by these rules (the link stays a link; a link that leads nowhere creates the file it names) |
//! | a FIFO, a device, a descriptor's link (`/dev/null`, `/dev/stdout`, `/dev/fd/N`) | straight through, opened to append (a pipe stays a pipe, a file redirected with `>>` keeps what it held); a full device is an error |
//! | a folder, a socket | refused, nothing written |
//!
//! A folder of files ([`write_folder`]) is written whole or not at all, under a lock, and
//! keeps no stale file of an earlier run (see [`MANIFEST`]). A temporary is removed on
//! error and when the run is interrupted (SIGINT, SIGTERM, SIGHUP); the interruption
//! waits while files are put in place (a folder's renames, a rewrite in place), so it
//! never leaves some of them new and some old. A run killed outright (SIGKILL) while it
//! rewrites a file in place leaves the old content in its `.old` copy.

mod cleanup;
mod folder;
mod place;

use std::cell::RefCell;
use std::fs;
use std::path::{Path, PathBuf};

pub use folder::{LOCK, MANIFEST, write_folder};

/// One file of the output: its name in the folder and its bytes.
pub type NamedFile = (String, Vec<u8>);

/// `path` with `bytes`, by what stands at `path` (see [the module](self)). Errors name the
/// file.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let place = place::place(path).map_err(cannot)?;
    place::write(&place, bytes).map_err(cannot)
}

/// Makes the folder `dir` (and its parents) if it is not there. Errors: it cannot be made
/// (a file of that name, no permission), named.
pub fn make_folder(dir: &Path) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create the folder {}: {e}", dir.display()))
}

/// Whether `a` and `b` name the same folder, however spelled (`out`, `./out/`,
/// `x/../out`, through a link): both are created if need be, then compared on disk.
///
/// Errors: a folder that cannot be created, named.
pub fn same_folder(a: &Path, b: &Path) -> Result<bool, String> {
    let on_disk = |p: &Path| {
        make_folder(p)?;
        fs::canonicalize(p).map_err(|e| format!("cannot read the folder {}: {e}", p.display()))
    };
    Ok(a == b || on_disk(a)? == on_disk(b)?)
}

thread_local! {
    /// The files this run has read (a card's TOML, a model's `config.json`), noted by the
    /// flags' readers ([`note_input`]), so that no output is written over one of them. One
    /// list a thread: a run parses its flags and writes its output on the thread that calls
    /// [`crate::cli::run`], so runs side by side in one process (a test binary's threads)
    /// never clear or see each other's.
    static INPUTS: RefCell<Vec<PathBuf>> = const { RefCell::new(Vec::new()) };
}

/// Notes that this run reads the file at `path` (a value parser that reads a file calls
/// it): [`crate::cli::run`] then refuses an `--out` or `--plot` file that is this file,
/// however spelled (`m/config.json`, `./m/../m/config.json`, a link, another hard link).
pub fn note_input(path: &Path) {
    INPUTS.with_borrow_mut(|inputs| inputs.push(path.to_path_buf()));
}

/// The files noted as read on this thread since the last [`forget_inputs`].
pub(crate) fn inputs() -> Vec<PathBuf> {
    INPUTS.with_borrow(Clone::clone)
}

/// Starts a run: no file noted as read yet on this thread.
pub(crate) fn forget_inputs() {
    INPUTS.with_borrow_mut(Vec::clear);
}

/// Whether `a` and `b` are one file, however spelled: the same device and inode when
/// both exist (links, hard links, `x/../x`), else the same absolute path once the folder
/// that holds each is resolved on disk.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b))
        && let (Some(ia), Some(ib)) = (file_identity(&ma), file_identity(&mb))
    {
        return ia == ib;
    }
    resolved(a) == resolved(b)
}

/// `path` made absolute, its folder resolved on disk where it exists.
fn resolved(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    let (Some(dir), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Some(absolute);
    };
    Some(fs::canonicalize(dir).map_or(absolute.clone(), |d| d.join(name)))
}

#[cfg(unix)]
fn file_identity(m: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_identity(_: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn runs_on_two_threads_keep_their_own_inputs() {
        forget_inputs();
        note_input(Path::new("a/config.json"));
        let (noted, cleared) = std::sync::mpsc::channel();
        let other = std::thread::spawn(move || {
            // Another run starts on its own thread while the first is between its flags and
            // its output: it sees none of the first's files and clears none of them.
            assert!(inputs().is_empty());
            note_input(Path::new("b/card.toml"));
            forget_inputs();
            noted.send(()).unwrap();
        });
        cleared.recv().unwrap();
        other.join().unwrap();
        assert_eq!(inputs(), [PathBuf::from("a/config.json")]);
        forget_inputs();
        assert!(inputs().is_empty());
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("kit-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_file_is_replaced_only_when_complete() {
        let d = scratch("one");
        fs::create_dir_all(&d).unwrap();
        let p = d.join("page.html");
        write_file(&p, b"good").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"good");
        write_file(&p, b"better").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"better");
        // A folder that does not exist: an error naming the file, nothing left behind.
        let e = write_file(&d.join("no/such/x.json"), b"{}").unwrap_err();
        assert!(
            e.starts_with("cannot write ") && e.contains("x.json"),
            "{e}"
        );
        let left: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["page.html"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_folder_keeps_exactly_this_runs_files_and_never_anyone_elses() {
        let d = scratch("folder");
        let file = |n: &str, b: &str| (n.to_string(), b.as_bytes().to_vec());
        write_folder(&d, &[file("a.csv", "1"), file("b.csv", "2")]).unwrap();
        fs::write(d.join("mine.csv"), "the user's").unwrap();
        write_folder(&d, &[file("a.csv", "3")]).unwrap();
        let mut names: Vec<String> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [MANIFEST, "a.csv", "mine.csv"], "b.csv was stale");
        assert_eq!(fs::read_to_string(d.join("a.csv")).unwrap(), "3");
        assert!(write_folder(&d, &[file("../x", "")]).is_err());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_folder_is_the_same_however_it_is_spelled() {
        let d = scratch("same");
        // Not there yet: created, then compared.
        let out = d.join("out");
        let spellings = [d.join("./out/"), d.join("x/../out")];
        fs::create_dir_all(d.join("x")).unwrap();
        for other in &spellings {
            assert!(same_folder(&out, other).unwrap(), "{}", other.display());
        }
        assert!(!same_folder(&out, &d.join("out2")).unwrap());
        fs::create_dir_all(d.join("real")).unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
        assert!(same_folder(&d.join("real"), &d.join("link")).unwrap());
        let file = d.join("file");
        fs::write(&file, "").unwrap();
        assert!(
            same_folder(&file.join("sub"), &out).is_err(),
            "a folder inside a file"
        );
        fs::remove_dir_all(&d).unwrap();
    }

    fn names(d: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_bad_name_writes_nothing_and_a_failed_rename_leaves_no_temporary_and_every_file_listed() {
        let d = scratch("fail");
        let file = |n: &str, b: &str| (n.to_string(), b.as_bytes().to_vec());
        // A bad or repeated name is refused before a byte is written.
        for bad in [
            vec![file("a.csv", "1"), file("x/y", "")],
            vec![file("a.csv", "1"), file("a.csv", "2")],
            vec![file(MANIFEST, "")],
        ] {
            assert!(write_folder(&d, &bad).is_err());
            assert!(!d.exists() || names(&d).is_empty(), "{:?}", names(&d));
        }
        write_folder(&d, &[file("old.svg", "0")]).unwrap();
        // A folder where b.svg should go: refused before a byte is written.
        fs::create_dir_all(d.join("b.svg").join("inside")).unwrap();
        let e = write_folder(
            &d,
            &[file("a.svg", "1"), file("b.svg", "2"), file("c.svg", "3")],
        )
        .unwrap_err();
        assert!(e.contains("b.svg"), "{e}");
        assert_eq!(
            names(&d),
            [MANIFEST, "b.svg", "old.svg"],
            "nothing written, no temporary left"
        );
        let list = fs::read_to_string(d.join(MANIFEST)).unwrap();
        assert!(list.ends_with(" old.svg\n"), "{list}");
        // The next good run then removes what the failed one may have left.
        fs::remove_dir_all(d.join("b.svg")).unwrap();
        write_folder(&d, &[file("c.svg", "4")]).unwrap();
        assert_eq!(names(&d), [MANIFEST, "c.svg"]);
        fs::remove_dir_all(&d).unwrap();
    }
}
