//! One output file, written by what stands at its path (see [the module](super)).

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::cleanup;

/// How many symbolic links [`follow`] goes through before it calls the path a loop.
const MAX_LINKS: usize = 40;

/// How a path is written, decided by what stands there.
#[derive(Debug)]
pub(super) enum Place {
    /// Nothing, or a regular file whose owner, mode and single name a new file can keep: a
    /// temporary beside it, renamed over it when complete.
    Replace(PathBuf, Option<Metadata>),
    /// A regular file with other names (hard links), or whose owner the new file could
    /// not keep: written in place, so every name sees the new bytes and the file stays
    /// who it belongs to.
    Rewrite(PathBuf),
    /// A FIFO or a device: written straight through, as a shell's `>` does.
    Through(PathBuf),
}

/// Where `path` leads once its symbolic links are followed (a link that leads nowhere
/// leads to the file it names, which is then created), and whether the way there passes
/// through an open file descriptor (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`), whose
/// link names a file only as text. Errors: more than [`MAX_LINKS`] links, or a link that
/// cannot be read.
pub(super) fn follow(path: &Path) -> io::Result<(PathBuf, bool)> {
    let mut at = path.to_path_buf();
    let mut through_a_descriptor = false;
    for _ in 0..MAX_LINKS {
        let is_link = fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            return Ok((at, through_a_descriptor));
        }
        through_a_descriptor |= is_descriptor(&at);
        let to = fs::read_link(&at)?;
        at = match at.parent() {
            Some(dir) if to.is_relative() => dir.join(to),
            _ => to,
        };
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links (a loop?)"
    )))
}

/// How `path` (its links followed) is to be written. Errors: a folder, a socket, or a
/// path that cannot be looked at.
pub(super) fn place(path: &Path) -> io::Result<Place> {
    // What the kernel finds at the end of the links: a pipe behind /dev/stdout is a FIFO.
    if fs::metadata(path).is_ok_and(|m| is_stream(&m)) {
        return Ok(Place::Through(path.to_path_buf()));
    }
    let (target, through_a_descriptor) = follow(path)?;
    if through_a_descriptor {
        // `--out /dev/stdout >> log`: the descriptor's file, appended to as the shell
        // opened it, never replaced by name.
        return Ok(Place::Through(path.to_path_buf()));
    }
    let path = target;
    let metadata = match fs::symlink_metadata(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Place::Replace(path, None)),
        other => other?,
    };
    let kind = metadata.file_type();
    if kind.is_dir() {
        return Err(io::Error::other("it is a folder"));
    }
    if kind.is_file() {
        return Ok(if several_names(&metadata) {
            Place::Rewrite(path)
        } else {
            Place::Replace(path, Some(metadata))
        });
    }
    if is_stream(&metadata) {
        return Ok(Place::Through(path));
    }
    Err(io::Error::other(
        "it is neither a file, a FIFO nor a device",
    ))
}

/// Writes `bytes` at `place`.
pub(super) fn write(place: &Place, bytes: &[u8]) -> io::Result<()> {
    match place {
        Place::Replace(path, existing) => match replace(path, existing.as_ref(), bytes)? {
            Replaced::Done => Ok(()),
            Replaced::InPlaceOnly => in_place(path, bytes),
        },
        Place::Rewrite(path) => in_place(path, bytes),
        Place::Through(path) => {
            let mut f = OpenOptions::new().append(true).open(path)?;
            f.write_all(bytes)?;
            f.flush()
        }
    }
}

/// What [`replace`] did.
enum Replaced {
    Done,
    /// The new file could not be given the old one's owner, or made beside it: nothing
    /// written yet.
    InPlaceOnly,
}

/// A new file at `path`, with the old one's owner and mode: a temporary with a random
/// name created exclusively beside it (it never follows or reuses what stands at its
/// name), flushed to disk and renamed over `path`.
fn replace(path: &Path, existing: Option<&Metadata>, bytes: &[u8]) -> io::Result<Replaced> {
    let mut tmp = match temporary_beside(path) {
        // A file the user may write in a folder they may not: rewritten, as `>` would.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied && existing.is_some() => {
            return Ok(Replaced::InPlaceOnly);
        }
        other => other?,
    };
    let _live = cleanup::register(tmp.path());
    if let Some(old) = existing
        && !keep_owner_and_mode(tmp.as_file(), old)?
    {
        return Ok(Replaced::InPlaceOnly);
    }
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(Replaced::Done)
}

/// A temporary file in `path`'s folder, named after it (`.NAME.XXXXXX.tmp`), created
/// with `O_EXCL` and the mode a new file gets (0666 less the umask); removed when dropped.
pub(super) fn temporary_beside(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // At most 100 characters of the name: a temporary must fit where the file's name fits.
    let name: String = path
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(100).collect())
        .unwrap_or_default();
    cleanup::watch_signals();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// `bytes` into the file at `path` itself (truncated first), flushed to disk. The one
/// write that is not whole-or-nothing: an error part way (a full disk) leaves the file
/// truncated, and says so.
fn in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).truncate(true).open(path)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    written.map_err(|e| io::Error::other(format!("{e}; it was rewritten in place (other names link to it, or its owner could not be kept) and is now incomplete")))
}

/// Whether `path` is an open descriptor's link (`/dev/stdout`, `/dev/fd/N`,
/// `/proc/PID/fd/N`, `/proc/self/fd/N`).
fn is_descriptor(path: &Path) -> bool {
    let text = path.to_string_lossy();
    let fd_dir = path.parent().is_some_and(|d| d.ends_with("fd"));
    matches!(&*text, "/dev/stdout" | "/dev/stderr" | "/dev/stdin")
        || (fd_dir && (text.starts_with("/proc/") || text.starts_with("/dev/fd/")))
}

#[cfg(unix)]
fn several_names(metadata: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    metadata.nlink() > 1
}

#[cfg(not(unix))]
fn several_names(_: &Metadata) -> bool {
    false
}

#[cfg(unix)]
fn is_stream(metadata: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    kind.is_fifo() || kind.is_char_device() || kind.is_block_device()
}

#[cfg(not(unix))]
fn is_stream(_: &Metadata) -> bool {
    false
}

/// Gives `new` the owner and permission bits of `old`; `false` when the owner cannot be
/// given (a file of another user's that this one may write but not give away).
#[cfg(unix)]
fn keep_owner_and_mode(new: &File, old: &Metadata) -> io::Result<bool> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, fchown};
    let mine = new.metadata()?;
    if (mine.uid(), mine.gid()) != (old.uid(), old.gid())
        && fchown(new, Some(old.uid()), Some(old.gid())).is_err()
    {
        return Ok(false);
    }
    new.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777))?;
    Ok(true)
}

#[cfg(not(unix))]
fn keep_owner_and_mode(new: &File, old: &Metadata) -> io::Result<bool> {
    new.set_permissions(old.permissions())?;
    Ok(true)
}
