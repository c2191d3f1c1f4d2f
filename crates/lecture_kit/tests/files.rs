//! Output files against what stands at their paths, written as a user and as root would
//! meet them: FIFOs and devices written through and never replaced, links followed and kept,
//! a file's mode and hard links kept, a planted link at a temporary's old name ignored, two
//! runs on one folder taking turns, an interrupted write leaving no temporary, a tampered
//! list of files deleting nothing the lecture did not write.

#![cfg(unix)]
#![allow(clippy::print_stderr)] // a skipped check says so, as CI reads it

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use lecture_kit::files::{MANIFEST, write_file, write_folder};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kit-out-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// The names in `d`, sorted.
fn names(d: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn file(name: &str, bytes: &str) -> (String, Vec<u8>) {
    (name.to_string(), bytes.as_bytes().to_vec())
}

#[test]
fn a_fifo_is_written_through_and_stays_a_fifo() {
    let d = scratch("fifo");
    let fifo = d.join("pipe");
    if !Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("SKIPPED: mkfifo is not available here");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    write_file(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(names(&d), ["pipe"], "no temporary left");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_device_is_written_through_never_replaced_and_a_full_one_is_an_error() {
    let null = Path::new("/dev/null");
    if fs::symlink_metadata(null).is_ok_and(|m| m.file_type().is_char_device()) {
        write_file(null, b"nothing").unwrap();
        let after = fs::symlink_metadata(null).unwrap();
        assert!(after.file_type().is_char_device(), "/dev/null replaced");
    }
    let full = Path::new("/dev/full");
    if fs::symlink_metadata(full).is_ok_and(|m| m.file_type().is_char_device()) {
        let e = write_file(full, b"no room").unwrap_err();
        assert!(e.starts_with("cannot write /dev/full"), "{e}");
        assert!(
            fs::symlink_metadata(full)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    } else {
        eprintln!("SKIPPED: no /dev/full here");
    }
    // A device node of our own, where the system lets us make one (as root).
    let d = scratch("dev");
    let node = d.join("null");
    let made = Command::new("mknod")
        .args([node.to_str().unwrap(), "c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if made {
        write_file(&node, b"x").unwrap();
        assert!(
            fs::symlink_metadata(&node)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    } else {
        eprintln!("SKIPPED: mknod is not permitted here (not root)");
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_link_is_followed_and_stays_a_link() {
    let d = scratch("link");
    fs::write(d.join("target.json"), "old").unwrap();
    symlink("target.json", d.join("out.json")).unwrap();
    write_file(&d.join("out.json"), b"new").unwrap();
    assert!(
        fs::symlink_metadata(d.join("out.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(d.join("target.json")).unwrap(), b"new");
    // A link that leads nowhere creates the file it names.
    symlink("made.json", d.join("dangling.json")).unwrap();
    write_file(&d.join("dangling.json"), b"made").unwrap();
    assert_eq!(fs::read(d.join("made.json")).unwrap(), b"made");
    // A loop is an error, not a hang.
    symlink("b", d.join("a")).unwrap();
    symlink("a", d.join("b")).unwrap();
    assert!(
        write_file(&d.join("a"), b"x")
            .unwrap_err()
            .contains("links")
    );
    assert_eq!(
        names(&d),
        [
            "a",
            "b",
            "dangling.json",
            "made.json",
            "out.json",
            "target.json"
        ]
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_files_mode_and_hard_links_are_kept() {
    let d = scratch("mode");
    let secret = d.join("secret.txt");
    fs::write(&secret, "old").unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();
    write_file(&secret, b"new").unwrap();
    assert_eq!(fs::metadata(&secret).unwrap().mode() & 0o777, 0o600);
    assert_eq!(fs::read(&secret).unwrap(), b"new");
    // Two names for one file: both see the new bytes, still one file.
    fs::hard_link(&secret, d.join("other-name.txt")).unwrap();
    let inode = fs::metadata(&secret).unwrap().ino();
    write_file(&secret, b"newer").unwrap();
    assert_eq!(fs::read(d.join("other-name.txt")).unwrap(), b"newer");
    assert_eq!(fs::metadata(&secret).unwrap().ino(), inode);
    assert_eq!(fs::metadata(&secret).unwrap().mode() & 0o777, 0o600);
    // A new file gets the mode any new file gets here: not the temporary's 0600.
    write_file(&d.join("fresh.txt"), b"x").unwrap();
    let fresh = fs::metadata(d.join("fresh.txt")).unwrap().mode() & 0o777;
    fs::write(d.join("by-std.txt"), "x").unwrap();
    let by_std = fs::metadata(d.join("by-std.txt")).unwrap().mode() & 0o777;
    assert_eq!(fresh, by_std);
    fs::remove_dir_all(&d).unwrap();
}

/// The old code named its temporary `.NAME.tmp-PID` and opened it without `O_EXCL`: the
/// first planted link below made it overwrite the victim. Random names created
/// exclusively never meet a planted link.
#[test]
fn a_link_planted_at_a_temporarys_name_is_never_followed() {
    let d = scratch("planted");
    let victim = d.join("victim.txt");
    fs::write(&victim, "keep me").unwrap();
    // The names a temporary once had (`.NAME.tmp-PID`), and one like today's pattern.
    for planted in [
        format!(".o.json.tmp-{}", std::process::id()),
        ".o.json.000000.tmp".to_string(),
    ] {
        symlink(&victim, d.join(planted)).unwrap();
    }
    write_file(&d.join("o.json"), b"{}").unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
    let out = fs::symlink_metadata(d.join("o.json")).unwrap();
    assert!(
        out.file_type().is_file(),
        "--out is a plain file, not a link"
    );
    assert_eq!(fs::read(d.join("o.json")).unwrap(), b"{}");
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn fifty_pairs_of_runs_on_one_folder_leave_one_runs_files_and_their_list() {
    let d = scratch("race");
    let first = vec![file("a.csv", "1"), file("b.csv", "2")];
    let second = vec![file("c.csv", "3")];
    for round in 0..50 {
        std::thread::scope(|s| {
            s.spawn(|| write_folder(&d, &first).unwrap());
            s.spawn(|| write_folder(&d, &second).unwrap());
        });
        let held = names(&d);
        let one = [MANIFEST, "a.csv", "b.csv"];
        let other = [MANIFEST, "c.csv"];
        assert!(held == one || held == other, "round {round}: {held:?}");
        let list = fs::read_to_string(d.join(MANIFEST)).unwrap();
        let listed: Vec<&str> = list
            .lines()
            .filter_map(|l| l.splitn(3, ' ').nth(2))
            .collect();
        assert_eq!(listed, held[1..], "round {round}: {list}");
    }
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_tampered_list_deletes_nothing_the_lecture_did_not_write() {
    let d = scratch("tampered");
    write_folder(&d, &[file("a.csv", "1")]).unwrap();
    fs::write(d.join("notes.txt"), "the user's notes").unwrap();
    fs::write(d.join(".gitkeep"), "").unwrap();
    fs::write(d.join("elsewhere.txt"), "linked to").unwrap();
    symlink("elsewhere.txt", d.join("link.csv")).unwrap();
    let hash_of = |bytes: &[u8]| {
        use sha2::Digest;
        format!("{:x}", sha2::Sha256::digest(bytes))
    };
    let id_of = |name: &str| {
        let m = fs::symlink_metadata(d.join(name)).unwrap();
        format!("{}:{}", m.dev(), m.ino())
    };
    let ours = fs::read_to_string(d.join(MANIFEST)).unwrap();
    // Listed by name only, with a wrong hash, with the right hash of the user's empty file
    // but another file's inode, a link with its target's hash and inode, an escape.
    let tampered = format!(
        "{ours}notes.txt\n{} {} notes.txt\n{} {} .gitkeep\n{} {} link.csv\n{} 0:0 ../escape\n",
        hash_of(b"other bytes"),
        id_of("notes.txt"),
        hash_of(b""),
        id_of("notes.txt"),
        hash_of(b"linked to"),
        id_of("elsewhere.txt"),
        hash_of(b""),
    );
    fs::write(d.join(MANIFEST), tampered).unwrap();
    write_folder(&d, &[file("b.csv", "2")]).unwrap();
    assert_eq!(
        names(&d),
        [
            ".gitkeep",
            MANIFEST,
            "b.csv",
            "elsewhere.txt",
            "link.csv",
            "notes.txt"
        ],
        "a.csv was ours and unchanged: removed; nothing else"
    );
    // A file of ours that the user changed since is theirs now.
    fs::write(d.join("b.csv"), "edited by hand").unwrap();
    write_folder(&d, &[file("c.csv", "3")]).unwrap();
    assert!(names(&d).contains(&"b.csv".to_string()));
    fs::remove_dir_all(&d).unwrap();
}

/// The child of [`sigterm_mid_write_leaves_no_temporary`]: writes a big file slowly enough
/// to be interrupted.
#[test]
fn child_writing_a_big_file() {
    let Ok(path) = std::env::var("KIT_FILES_CHILD_OUT") else {
        return;
    };
    let bytes = vec![b'x'; 512 << 20];
    for _ in 0..20 {
        let _ = write_file(Path::new(&path), &bytes);
    }
}

#[test]
fn sigterm_mid_write_leaves_no_temporary() {
    let d = scratch("sigterm");
    let out = d.join("o.json");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writing_a_big_file", "--nocapture"])
        .env("KIT_FILES_CHILD_OUT", &out)
        .spawn()
        .unwrap();
    // Wait until the temporary exists, then interrupt.
    let started = std::time::Instant::now();
    let temporary = || names(&d).iter().any(|n| n.ends_with(".tmp"));
    while !temporary() && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(temporary(), "the child never started writing");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(!status.success(), "ended by the signal: {status:?}");
    let left: Vec<String> = names(&d).into_iter().filter(|n| n != "o.json").collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // Either no file or a whole one (an earlier round completed), never a part.
    let size = fs::metadata(&out).map_or(0, |m| m.len());
    assert!(size == 0 || size == 512 << 20, "{size} bytes");
    fs::remove_dir_all(&d).unwrap();
}

/// The child of the tests below: writes what `KIT_FILES_CHILD` asks, slowly enough to be
/// interrupted.
#[test]
fn child_writing_on_request() {
    let Ok(what) = std::env::var("KIT_FILES_CHILD") else {
        return;
    };
    let path = std::env::var("KIT_FILES_CHILD_AT").unwrap();
    match what.as_str() {
        // Rounds of 16 MiB, each round's bytes all one letter.
        "rewrite" => {
            for round in 0..20u8 {
                let _ = write_file(Path::new(&path), &vec![b'a' + round; 16 << 20]);
            }
        }
        "folder" => {
            let files = [
                file("a.csv", "new"),
                file("b.csv", "new"),
                file("c.csv", "new"),
            ];
            write_folder(Path::new(&path), &files).unwrap();
        }
        _ => unreachable!("{what}"),
    }
}

fn child(what: &str, at: &Path) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "child_writing_on_request", "--nocapture"])
        .env("KIT_FILES_CHILD", what)
        .env("KIT_FILES_CHILD_AT", at);
    c
}

/// A file with a second name is rewritten in place; the old code truncated it first, so a
/// signal part way left both names holding a part. Now the signal waits until the file is
/// whole, and the copy of the old content kept meanwhile is gone.
#[test]
fn sigterm_while_a_hard_linked_file_is_rewritten_leaves_it_whole() {
    let d = scratch("rewrite");
    let out = d.join("o.json");
    fs::write(&out, "old").unwrap();
    fs::hard_link(&out, d.join("second-name.json")).unwrap();
    let mut running = child("rewrite", &out).spawn().unwrap();
    // Wait until the file is part way through its rewrite (its old content copied aside,
    // the file truncated and not yet whole), then interrupt.
    let started = std::time::Instant::now();
    let part_way = || {
        let size = fs::metadata(&out).map_or(0, |m| m.len());
        let copied = names(&d).iter().any(|n| n.ends_with(".old"));
        copied && size != 3 && size != 16 << 20
    };
    while !part_way() && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    assert!(part_way(), "the child never started writing");
    let killed = Command::new("kill")
        .args(["-TERM", &running.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = running.wait().unwrap();
    assert!(!status.success(), "ended by the signal: {status:?}");
    assert_eq!(
        names(&d),
        ["o.json", "second-name.json"],
        "nothing left beside"
    );
    let bytes = fs::read(&out).unwrap();
    let whole =
        bytes == b"old" || (bytes.len() == 16 << 20 && bytes.iter().all(|&b| b == bytes[0]));
    assert!(whole, "a part: {} bytes", bytes.len());
    assert_eq!(fs::read(d.join("second-name.json")).unwrap(), bytes);
    fs::remove_dir_all(&d).unwrap();
}

/// A SIGTERM delivered at the third rename of a folder's write (strace injects it: the
/// list first, then a.csv, then b.csv) once left a.csv new and b.csv and c.csv old, the
/// list naming files that were not there. Now the renames land together.
#[test]
fn sigterm_between_a_folders_renames_lands_all_of_them() {
    let traced = Command::new("strace").arg("-V").output();
    if !traced.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: strace is not installed (it injects the signal)");
        return;
    }
    let d = scratch("renames");
    let dir = d.join("tables");
    write_folder(
        &dir,
        &[
            file("a.csv", "old"),
            file("b.csv", "old"),
            file("c.csv", "old"),
        ],
    )
    .unwrap();
    let mut traced = Command::new("strace");
    traced.args([
        "-f",
        "-qq",
        "-o",
        "/dev/null",
        "-e",
        "trace=rename,renameat,renameat2",
        "-e",
        "inject=rename,renameat,renameat2:signal=TERM:when=3",
    ]);
    let inner = child("folder", &dir);
    traced.arg(inner.get_program()).args(inner.get_args());
    traced.envs(inner.get_envs().filter_map(|(k, v)| Some((k, v?))));
    // Ended by the signal once the renames are done, or, when the run's last step beats
    // the thread that handles the signal, by itself a moment earlier: either way after them.
    let status = traced.status().unwrap();
    {
        use std::os::unix::process::ExitStatusExt;
        let by_term = status.signal() == Some(15) || status.code() == Some(128 + 15);
        assert!(status.success() || by_term, "{status:?}");
    }
    let held: Vec<String> = ["a.csv", "b.csv", "c.csv"]
        .iter()
        .map(|n| fs::read_to_string(dir.join(n)).unwrap())
        .collect();
    assert_eq!(held, ["new", "new", "new"], "the renames landed together");
    assert_eq!(names(&dir), [MANIFEST, "a.csv", "b.csv", "c.csv"]);
    let list = fs::read_to_string(dir.join(MANIFEST)).unwrap();
    assert_eq!(list.lines().count(), 3, "{list}");
    fs::remove_dir_all(&d).unwrap();
}
