//! A file a user names on the command line (a card's TOML, a model's `config.json`): read
//! only when it is a regular file and at most a stated size, so `/dev/zero` or a FIFO is
//! refused at once instead of filling memory or waiting for a writer forever.

use std::io::Read;
use std::path::Path;

/// The text of the regular file at `path`, at most `max_bytes` long; `what` names the kind
/// of file in the messages ("a card file", "a config.json").
///
/// Errors (a sentence, without the path: the caller names the file): a file that cannot be
/// read, is not a regular file, is longer than `max_bytes` or is not UTF-8.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("user_file_doc_{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("card.toml");
/// std::fs::write(&path, "name = 'x'\n").unwrap();
/// assert_eq!(hw_specs::user_file::read(&path, 64, "a card file").unwrap(), "name = 'x'\n");
/// assert!(hw_specs::user_file::read(&path, 4, "a card file").unwrap_err().contains("more than 4 bytes"));
/// assert!(hw_specs::user_file::read(&dir, 64, "a card file").unwrap_err().contains("not a regular file"));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read(path: &Path, max_bytes: u64, what: &str) -> Result<String, String> {
    // Asked before opening: opening a FIFO waits for a writer.
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err(format!("not a regular file ({what} is one)"));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut text = String::new();
    let read = file
        .take(max_bytes.saturating_add(1))
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if read as u64 > max_bytes {
        return Err(format!(
            "more than {max_bytes} bytes, far more than {what} holds"
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_refused_without_reading_them() {
        // /dev/zero would fill memory and never end; it is not a regular file.
        let e = read(Path::new("/dev/zero"), 1 << 20, "a card file").unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let e = read(Path::new("/no/such/file"), 10, "a card file").unwrap_err();
        assert!(e.starts_with("cannot read it"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = std::env::temp_dir().join(format!("user_file_fifo_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("card.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.map(|s| s.success()).unwrap_or(false) {
            let e = read(&fifo, 1 << 20, "a card file").unwrap_err();
            assert!(e.contains("not a regular file"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_of_exactly_the_cap_reads_and_one_byte_more_does_not() {
        let dir = std::env::temp_dir().join(format!("user_file_cap_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, "x".repeat(100)).unwrap();
        assert_eq!(read(&path, 100, "a file").unwrap().len(), 100);
        assert!(read(&path, 99, "a file").is_err());
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(
            read(&path, 100, "a file")
                .unwrap_err()
                .starts_with("cannot read it")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
