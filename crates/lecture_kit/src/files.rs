//! Output files written whole or not at all.
//!
//! A lecture's `--out FILE`, `--format csv --out DIR` and `--plot DIR` never leave a
//! truncated file (text cut mid-character, JSON that does not parse, an SVG without its
//! end tag) and never replace a good file with a bad one: every file is written to a
//! temporary file in the same folder, flushed to disk, and renamed over its name only when
//! complete. A folder of files is written whole or not at all: if one file fails, none is
//! renamed and the temporaries are removed. Files that an earlier run wrote into the same
//! folder and this run does not (a table of a demo not chosen this time) are removed, so
//! the folder holds exactly this run's output; the folder's list of them is
//! [`MANIFEST`]. Files the lecture did not write are never touched.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The file in an output folder that lists the files the last run wrote there.
pub const MANIFEST: &str = ".lecture-files";

/// One file of the output: its name in the folder and its bytes.
pub type NamedFile = (String, Vec<u8>);

/// `path` with `bytes`, whole or not at all. Errors name the file.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = temporary(path);
    let result = write_synced(&tmp, bytes).and_then(|()| fs::rename(&tmp, path));
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

/// Writes `files` into the folder `dir` (created if needed), whole or not at all, and
/// removes the files an earlier run wrote there that this one does not. Errors name the
/// file that could not be written; then no file of `files` has changed.
pub fn write_folder(dir: &Path, files: &[NamedFile]) -> Result<(), String> {
    fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the folder {}: {e}", dir.display()))?;
    let mut written: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (name, bytes) in files {
        if name.contains(['/', '\\']) || name == MANIFEST {
            return Err(format!("cannot write {name:?}: not a plain file name"));
        }
        let path = dir.join(name);
        let tmp = temporary(&path);
        if let Err(e) = write_synced(&tmp, bytes) {
            let _ = fs::remove_file(&tmp);
            for (t, _) in &written {
                let _ = fs::remove_file(t);
            }
            return Err(format!("cannot write {}: {e}", path.display()));
        }
        written.push((tmp, path));
    }
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let manifest = names.join("\n") + "\n";
    let manifest_path = dir.join(MANIFEST);
    let stale: Vec<String> = fs::read_to_string(&manifest_path)
        .unwrap_or_default()
        .lines()
        .filter(|n| !n.is_empty() && !n.contains(['/', '\\']) && !names.contains(n))
        .map(String::from)
        .collect();
    write_file(&manifest_path, manifest.as_bytes())?;
    for (tmp, path) in &written {
        fs::rename(tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    for name in stale {
        let _ = fs::remove_file(dir.join(name));
    }
    Ok(())
}

/// A temporary name beside `path`: `.NAME.tmp-PID`.
fn temporary(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = fs::File::create(path)?;
    f.write_all(bytes)?;
    f.flush()?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(e.starts_with("cannot write ") && e.contains("x.json"), "{e}");
        let left: Vec<_> = fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
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
}
