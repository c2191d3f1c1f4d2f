//! One output file, written by what stands at its path (see [the module](super)).

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Seek, Write};
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
    let (mut tmp, _live) = match temporary_beside(path) {
        // A file the user may write in a folder they may not: rewritten, as `>` would.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied && existing.is_some() => {
            return Ok(Replaced::InPlaceOnly);
        }
        other => other?,
    };
    if let Some(old) = existing
        && !keep_owner_and_mode(tmp.as_file(), old)?
    {
        return Ok(Replaced::InPlaceOnly);
    }
    // Through the file itself: tempfile would add the random name to an error, and a
    // message must read the same on every run.
    tmp.as_file_mut().write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(Replaced::Done)
}

/// A temporary file in `path`'s folder, named after it (`.NAME.XXXXXX.tmp`), created
/// with `O_EXCL` and the mode a new file gets (0666 less the umask); removed when dropped
/// and, while registered, on a signal.
pub(super) fn temporary_beside(
    path: &Path,
) -> io::Result<(tempfile::NamedTempFile, cleanup::Registered)> {
    cleanup::made(|| temporary_in(path, folder_of(path), ".tmp", 0o666))
}

/// The folder that holds `path` (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A temporary file in `dir`, named after `path` (`.NAME.XXXXXX` and `suffix`), created
/// with `O_EXCL` and `mode` less the umask (where modes exist).
fn temporary_in(
    path: &Path,
    dir: &Path,
    suffix: &str,
    mode: u32,
) -> io::Result<tempfile::NamedTempFile> {
    // At most 100 characters of the name: a temporary must fit where the file's name fits.
    let name: String = path
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(100).collect())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(suffix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = mode;
    builder.tempfile_in(dir)
}

/// `bytes` into the file at `path` itself, so that every name of it sees them and its
/// owner stays. The old content is first copied aside ([`backup_of`]); the file is then
/// truncated and rewritten, a signal waiting until it is whole. On success the copy is
/// removed; on an error part way (a full disk) the old content is put back, or, where
/// even that fails, left in the copy, which the error names. Where no copy can be made,
/// nothing is written: the file is never the only place its old bytes were.
fn in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let in_place_why = "it is rewritten in place because other names link to it or its \
                        owner could not be kept";
    let (mut backup, live) = backup_of(path).map_err(|e| {
        io::Error::other(format!(
            "{in_place_why}, and a copy of its old content could not be made first ({e}); \
             nothing was written"
        ))
    })?;
    // Until the file is truncated the copy is only a copy, removed on a signal like any
    // temporary; from then on a signal waits for the commit, and a copy that must stay
    // is unregistered first.
    let _commit = cleanup::commit();
    let mut f = OpenOptions::new().write(true).truncate(true).open(path)?;
    let Err(e) = f.write_all(bytes).and_then(|()| f.sync_all()) else {
        return Ok(());
    };
    let restored = f
        .set_len(0)
        .and_then(|()| f.rewind())
        .and_then(|()| backup.as_file_mut().rewind())
        .and_then(|_| io::copy(backup.as_file_mut(), &mut f))
        .and_then(|_| f.sync_all());
    match restored {
        Ok(()) => Err(io::Error::other(format!(
            "{e}; {in_place_why}, and its old content was put back"
        ))),
        Err(_) => {
            drop(live);
            let kept = backup.into_temp_path().keep().map_err(|k| k.error)?;
            Err(io::Error::other(format!(
                "{e}; {in_place_why}: it is now incomplete, and its old content is kept in {}",
                kept.display()
            )))
        }
    }
}

/// A copy of the file at `path`, flushed to disk: a temporary beside it
/// (`.NAME.XXXXXX.old`) or, where its folder cannot take one, in the system's temporary
/// folder, registered for removal on a signal. It is removed when dropped; a run killed
/// outright (SIGKILL) while it rewrites the file leaves the old content there.
fn backup_of(path: &Path) -> io::Result<(tempfile::NamedTempFile, cleanup::Registered)> {
    let mut old = File::open(path)?;
    // Readable by its owner only, whatever the file's mode: the copy must not show
    // anyone what the file did not.
    let beside = cleanup::made(|| temporary_in(path, folder_of(path), ".old", 0o600));
    let (mut copy, live) = match beside {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            cleanup::made(|| temporary_in(path, &std::env::temp_dir(), ".old", 0o600))?
        }
        other => other?,
    };
    io::copy(&mut old, copy.as_file_mut())?;
    copy.as_file().sync_all()?;
    Ok((copy, live))
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
