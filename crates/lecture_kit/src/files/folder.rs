//! A folder of output files, written whole under a lock, with the list of what it holds.

use std::collections::BTreeMap;
use std::fs::{self, File, Metadata};
use std::io::{self, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::place::temporary_beside;
use super::{NamedFile, cleanup, make_folder};

/// The file in an output folder that lists the files the last run wrote there, one line
/// each: `SHA256 DEVICE:INODE NAME` (the file's bytes and which file it is).
pub const MANIFEST: &str = ".lecture-files";

/// The file in an output folder that two runs lock to take turns where the folder itself
/// cannot be locked (kept; it holds nothing).
pub const LOCK: &str = ".lecture-files.lock";

/// What the manifest says of one file: its hash and which file it was (device, inode).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    hash: String,
    id: (u64, u64),
}

/// Writes `files` into the folder `dir` (created if needed), whole or not at all, and
/// removes the files an earlier run wrote there that this one does not: those the
/// folder's [`MANIFEST`] lists that are still the very file written then (same device and
/// inode), a plain file, holding the same bytes (same SHA-256). A file the lecture did not
/// write is never removed: a list edited to name one would need that file's inode and
/// hash, and a file of ours the user edited since is theirs.
///
/// The folder is locked for the whole write (an advisory lock on the folder, or on
/// [`LOCK`] in it where that cannot be: see `lock`): two runs writing into one folder take
/// turns, and the folder ends with one run's files and a list naming exactly them.
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
        let reserved = [MANIFEST, LOCK, ".", ".."].contains(name);
        if name.is_empty() || name.contains(['/', '\\']) || reserved {
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
        if fs::symlink_metadata(&path).is_ok_and(|m| !m.file_type().is_file()) {
            return Err(format!(
                "cannot write {}: something other than a file stands there",
                path.display()
            ));
        }
    }
    let manifest_path = dir.join(MANIFEST);
    let earlier = read_manifest(&manifest_path);
    let mut ours = BTreeMap::new();
    let mut temporaries = Vec::new();
    for (name, bytes) in files {
        let path = dir.join(name);
        let written = temporary_beside(&path).and_then(|(mut tmp, live)| {
            // Through the file itself: tempfile would add the random name to an error.
            tmp.as_file_mut().write_all(bytes)?;
            tmp.as_file().sync_all()?;
            // A rename keeps the inode: the temporary's is the file's.
            let id = file_id(&tmp.as_file().metadata()?);
            Ok((tmp, live, path.clone(), id))
        });
        let (tmp, live, path, id) =
            written.map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let hash = format!("{:x}", Sha256::digest(bytes));
        ours.insert(name.clone(), Entry { hash, id });
        temporaries.push((tmp, live, path));
    }
    let stale: BTreeMap<String, Entry> = earlier
        .into_iter()
        .filter(|(name, _)| !ours.contains_key(name))
        .collect();
    // Before any rename, the list names every file that may be this lecture's once it is
    // done, so that a rename failing part way leaves no file of ours unlisted.
    let mut both = ours.clone();
    both.extend(stale.clone());
    write_manifest(&manifest_path, &both)?;
    // The renames and the final list land together: a signal waits for them.
    let _commit = cleanup::commit();
    for (tmp, _live, path) in temporaries {
        tmp.persist(&path)
            .map_err(|e| format!("cannot write {}: {}", path.display(), e.error))?;
    }
    write_manifest(&manifest_path, &ours)?;
    for (name, entry) in stale {
        let path = dir.join(&name);
        if still_ours(&path, &entry) {
            let _ = fs::remove_file(&path);
        }
    }
    Ok(())
}

/// Whether the file at `path` is the one `entry` lists: a plain file (not a link), the
/// same device and inode, the same SHA-256, hashed through one open handle whose file is
/// checked to be the one at `path`.
fn still_ours(path: &Path, entry: &Entry) -> bool {
    let Ok(at_path) = fs::symlink_metadata(path) else {
        return false;
    };
    if !at_path.file_type().is_file() || file_id(&at_path) != entry.id {
        return false;
    }
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    let same_file = file.metadata().is_ok_and(|m| file_id(&m) == entry.id);
    let mut hasher = Sha256::new();
    let hashed = io::copy(&mut file, &mut hasher).is_ok();
    same_file && hashed && format!("{:x}", hasher.finalize()) == entry.hash
}

/// A file's device and inode (0, 0 where the system has none to give).
#[cfg(unix)]
fn file_id(m: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn file_id(_: &Metadata) -> (u64, u64) {
    (0, 0)
}

/// The files a manifest lists; a line that is not `HASH DEVICE:INODE NAME` with a plain
/// name is ignored (so a list of another form, or a tampered one, removes nothing).
fn read_manifest(path: &Path) -> BTreeMap<String, Entry> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let entry = |line: &str| {
        let mut parts = line.splitn(3, ' ');
        let (hash, id, name) = (parts.next()?, parts.next()?, parts.next()?);
        let hex = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
        let (dev, ino) = id.split_once(':')?;
        let id = (dev.parse().ok()?, ino.parse().ok()?);
        let reserved = [MANIFEST, LOCK, ".", ".."].contains(&name);
        let plain = !name.is_empty() && !name.contains(['/', '\\']) && !reserved;
        let hash = hash.to_ascii_lowercase();
        (hex && plain).then(|| (name.to_string(), Entry { hash, id }))
    };
    text.lines().filter_map(entry).collect()
}

fn write_manifest(path: &Path, files: &BTreeMap<String, Entry>) -> Result<(), String> {
    let text: String = files
        .iter()
        .map(|(name, e)| format!("{} {}:{} {name}\n", e.hash, e.id.0, e.id.1))
        .collect();
    super::write_file(path, text.as_bytes())
}

/// An exclusive advisory lock for `dir`, held until the file is dropped: on the folder
/// itself (Unix), or, where the system cannot lock a folder opened for reading (network
/// file systems emulate `flock` with write locks; other systems cannot open a folder as a
/// file), on [`LOCK`] in it, which is then kept.
fn lock(dir: &Path) -> io::Result<File> {
    #[cfg(unix)]
    if let Ok(handle) = File::open(dir)
        && handle.lock().is_ok()
    {
        return Ok(handle);
    }
    let path = dir.join(LOCK);
    if fs::symlink_metadata(&path).is_ok_and(|m| !m.file_type().is_file()) {
        return Err(io::Error::other(format!("{LOCK} is not a plain file")));
    }
    let handle = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    handle.lock()?;
    Ok(handle)
}
