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
/// file that could not be written; then no file of `files` has changed, unless renaming
/// the complete files failed part way (a file the system will not replace), when the
/// files renamed before it are new and no temporary file is left.
pub fn write_folder(dir: &Path, files: &[NamedFile]) -> Result<(), String> {
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() || name.contains(['/', '\\']) || *name == MANIFEST {
            return Err(format!("cannot write {name:?}: not a plain file name"));
        }
        if names[..i].contains(name) {
            return Err(format!("cannot write {name:?} twice into one folder"));
        }
    }
    make_folder(dir)?;
    let mut written: Vec<(PathBuf, PathBuf)> = Vec::new();
    let remove = |temporaries: &[(PathBuf, PathBuf)]| {
        for (t, _) in temporaries {
            let _ = fs::remove_file(t);
        }
    };
    for (name, bytes) in files {
        let path = dir.join(name);
        let tmp = temporary(&path);
        if let Err(e) = write_synced(&tmp, bytes) {
            let _ = fs::remove_file(&tmp);
            remove(&written);
            return Err(format!("cannot write {}: {e}", path.display()));
        }
        written.push((tmp, path));
    }
    let manifest_path = dir.join(MANIFEST);
    let earlier: Vec<String> = fs::read_to_string(&manifest_path)
        .unwrap_or_default()
        .lines()
        .filter(|n| !n.is_empty() && !n.contains(['/', '\\']))
        .map(String::from)
        .collect();
    // Before any rename, the list names every file that may be this lecture's once it is
    // done, so that a rename failing part way leaves no file of ours unlisted.
    let listed = |names: &[&str]| write_file(&manifest_path, (names.join("\n") + "\n").as_bytes());
    let stale: Vec<&str> = earlier
        .iter()
        .map(String::as_str)
        .filter(|n| !names.contains(n))
        .collect();
    if let Err(e) = listed(&[&names[..], &stale[..]].concat()) {
        remove(&written);
        return Err(e);
    }
    for (i, (tmp, path)) in written.iter().enumerate() {
        if let Err(e) = fs::rename(tmp, path) {
            remove(&written[i..]);
            return Err(format!("cannot write {}: {e}", path.display()));
        }
    }
    listed(&names)?;
    for name in stale {
        let _ = fs::remove_file(dir.join(name));
    }
    Ok(())
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

/// A temporary name beside `path`: `.NAME.tmp-PID`.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
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
        // A folder where b.svg should go: its rename fails, after a.svg's.
        fs::create_dir_all(d.join("b.svg").join("inside")).unwrap();
        let e = write_folder(
            &d,
            &[file("a.svg", "1"), file("b.svg", "2"), file("c.svg", "3")],
        )
        .unwrap_err();
        assert!(e.contains("b.svg"), "{e}");
        assert_eq!(
            names(&d),
            [MANIFEST, "a.svg", "b.svg", "old.svg"],
            "no temporary left"
        );
        let list = fs::read_to_string(d.join(MANIFEST)).unwrap();
        for n in ["a.svg", "b.svg", "c.svg", "old.svg"] {
            assert!(list.lines().any(|l| l == n), "{n} not listed: {list}");
        }
        // The next good run then removes what the failed one may have left.
        fs::remove_dir_all(d.join("b.svg")).unwrap();
        write_folder(&d, &[file("c.svg", "4")]).unwrap();
        assert_eq!(names(&d), [MANIFEST, "c.svg"]);
        fs::remove_dir_all(&d).unwrap();
    }
}
