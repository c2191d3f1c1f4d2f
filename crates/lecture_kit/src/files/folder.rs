//! A folder of output files, written whole under a lock, with the list of what it holds.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::place::temporary_beside;
use super::{NamedFile, cleanup, make_folder};

/// The file in an output folder that lists the files the last run wrote there, one line
/// each, `SHA256  NAME` (the format of `sha256sum`, so `sha256sum -c .lecture-files`
/// checks them).
pub const MANIFEST: &str = ".lecture-files";

/// Writes `files` into the folder `dir` (created if needed), whole or not at all, and
/// removes the files an earlier run wrote there that this one does not: those the
/// folder's [`MANIFEST`] lists whose bytes are still the ones listed, and that are still
/// plain files. A file the lecture did not write, or that was changed since, is never
/// removed, whatever the list says.
///
/// The folder is locked for the whole write (an advisory lock on the folder itself, on
/// Unix): two runs writing into one folder take turns, and the folder ends with one run's
/// files and a list naming exactly them.
///
/// Errors name the file that could not be written; then no file of `files` has changed,
/// unless renaming the complete files failed part way (a file the system will not
/// replace), when the files renamed before it are new, every file that may be the
/// lecture's is listed, and no temporary file is left. A name of `files` where something
/// other than a plain file stands (a link, a folder, a FIFO) is refused before a byte is
/// written.
pub fn write_folder(dir: &Path, files: &[NamedFile]) -> Result<(), String> {
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() || name.contains(['/', '\\']) || *name == MANIFEST || *name == ".." {
            return Err(format!("cannot write {name:?}: not a plain file name"));
        }
        if names[..i].contains(name) {
            return Err(format!("cannot write {name:?} twice into one folder"));
        }
    }
    make_folder(dir)?;
    let _lock = lock(dir).map_err(|e| format!("cannot lock the folder {}: {e}", dir.display()))?;
    for name in names.iter().copied().chain([MANIFEST]) {
        let path = dir.join(name);
        if let Ok(m) = fs::symlink_metadata(&path)
            && !m.file_type().is_file()
        {
            return Err(format!(
                "cannot write {}: something other than a file stands there",
                path.display()
            ));
        }
    }
    let manifest_path = dir.join(MANIFEST);
    let earlier = read_manifest(&manifest_path);
    let ours: BTreeMap<String, String> = files
        .iter()
        .map(|(name, bytes)| (name.clone(), sha256(bytes)))
        .collect();
    let mut temporaries = Vec::new();
    for (name, bytes) in files {
        let path = dir.join(name);
        let written = temporary_beside(&path).and_then(|mut tmp| {
            let live = cleanup::register(tmp.path());
            tmp.write_all(bytes)?;
            tmp.as_file().sync_all()?;
            Ok((tmp, live, path.clone()))
        });
        let written = written.map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        temporaries.push(written);
    }
    let stale: BTreeMap<String, String> = earlier
        .into_iter()
        .filter(|(name, _)| !ours.contains_key(name))
        .collect();
    // Before any rename, the list names every file that may be this lecture's once it is
    // done, so that a rename failing part way leaves no file of ours unlisted.
    let mut both = ours.clone();
    both.extend(stale.clone());
    write_manifest(&manifest_path, &both)?;
    for (tmp, _live, path) in temporaries {
        tmp.persist(&path)
            .map_err(|e| format!("cannot write {}: {}", path.display(), e.error))?;
    }
    write_manifest(&manifest_path, &ours)?;
    for (name, hash) in stale {
        let path = dir.join(&name);
        let ours_still = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file())
            && fs::read(&path).is_ok_and(|bytes| sha256(&bytes) == hash);
        if ours_still {
            let _ = fs::remove_file(&path);
        }
    }
    Ok(())
}

/// The lowercase hex SHA-256 of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// The files a manifest lists, with their hashes; a line that is not `HASH  NAME` with a
/// plain name is ignored (so a list from before hashes, or a tampered one, removes nothing).
fn read_manifest(path: &Path) -> BTreeMap<String, String> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let entry = |line: &str| {
        let (hash, name) = line.split_once("  ")?;
        let hex = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
        let plain = !name.is_empty() && !name.contains(['/', '\\']) && name != MANIFEST;
        (hex && plain && name != "..").then(|| (name.to_string(), hash.to_ascii_lowercase()))
    };
    text.lines().filter_map(entry).collect()
}

fn write_manifest(path: &Path, files: &BTreeMap<String, String>) -> Result<(), String> {
    let text: String = files
        .iter()
        .map(|(name, hash)| format!("{hash}  {name}\n"))
        .collect();
    super::write_file(path, text.as_bytes())
}

/// An exclusive advisory lock on the folder `dir`, held until the file is dropped.
#[cfg(unix)]
fn lock(dir: &Path) -> io::Result<File> {
    let handle = File::open(dir)?;
    handle.lock()?;
    Ok(handle)
}

/// Elsewhere a folder cannot be opened as a file: the lock is a file in it.
#[cfg(not(unix))]
fn lock(dir: &Path) -> io::Result<File> {
    let handle = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".lecture-files.lock"))?;
    handle.lock()?;
    Ok(handle)
}
