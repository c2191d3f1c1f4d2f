//! The training corpus: the Rust sources of eight crates from crates.io, pinned by
//! version and SHA-256, read as bytes (the toy model's vocabulary is the 256 byte values).
//!
//! Why these: the workspace already depends on every one of them, so Cargo has fetched
//! their `.crate` archives into its cache (`$CARGO_HOME/registry/cache/`) and checked each
//! against `Cargo.lock`'s checksum before anything here runs; a fresh machine gets them
//! with `cargo fetch`, the registry's ordinary client. Each is licensed "MIT OR
//! Apache-2.0" (its `Cargo.toml`), so its text may be used and copied with its notice;
//! nothing of it is committed here but the shipped weights trained on it.
//!
//! What is read: every `.rs` file of each archive of at most [`MAX_FILE`] bytes (larger
//! files are generated tables), in path order, crate after crate as [`SOURCES`] lists
//! them. Held out: every [`HELD_OUT_EVERY`]th file of that order (files 0, 20, 40, …),
//! the rest trains. Both byte streams are checked against pinned SHA-256s
//! ([`TRAIN_SHA256`], [`HELD_OUT_SHA256`]), so every machine trains and measures on the
//! same bytes.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::Error;

/// One crate of the corpus: its name, version and the SHA-256 of its `.crate` archive (as
/// `Cargo.lock` records it), and its licence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// The crate's name on crates.io.
    pub name: &'static str,
    /// The exact version.
    pub version: &'static str,
    /// SHA-256 of `name-version.crate`, hex.
    pub sha256: &'static str,
    /// The `license` field of its `Cargo.toml`.
    pub licence: &'static str,
}

const fn src(name: &'static str, version: &'static str, sha256: &'static str) -> Source {
    Source {
        name,
        version,
        sha256,
        licence: "MIT OR Apache-2.0",
    }
}

/// The crates read, in order (hand-written Rust: a parser, a regex syntax, an array
/// library, a command-line parser, a thread pool, a property tester, a JSON library and a
/// hash table).
pub const SOURCES: [Source; 8] = [
    src(
        "syn",
        "2.0.119",
        "872831b642d1a07999a962a351ed35b955ea2cfc8f3862091e2a240a84f17297",
    ),
    src(
        "regex-syntax",
        "0.8.12",
        "d902046e6a28a1e4c3cab97258a0ce11e994903f01c2d97a9447a0b3df85f4f6",
    ),
    src(
        "ndarray",
        "0.17.2",
        "520080814a7a6b4a6e9070823bb24b4531daac8c4627e08ba5de8c5ef2f2752d",
    ),
    src(
        "clap_builder",
        "4.6.7",
        "ec0797fb7aeb1406c84efac526901f7ec3ead2124f946b494e72879d4b54704d",
    ),
    src(
        "rayon",
        "1.12.0",
        "fb39b166781f92d482534ef4b4b1b2568f42613b53e5b6c160e24cfbfa30926d",
    ),
    src(
        "proptest",
        "1.11.0",
        "4b45fcc2344c680f5025fe57779faef368840d0bd1f42f216291f0dc4ace4744",
    ),
    src(
        "serde_json",
        "1.0.154",
        "e7e9cc8b1b85264074fbcc02a88680c4096b1e47df8f739dceb03bf482f04bd6",
    ),
    src(
        "hashbrown",
        "0.16.1",
        "841d1cc9bed7f9236f321df977030373f4a4163ae1a7dbfe1a51a2c1a51d9100",
    ),
];

/// Files larger than this are left out (generated Unicode and lookup tables).
pub const MAX_FILE: usize = 100_000;
/// One file in this many is held out.
pub const HELD_OUT_EVERY: usize = 20;
/// SHA-256 of the training bytes.
pub const TRAIN_SHA256: &str = "ab0e7e52807fbbc49cca8a22fca8a502fc6605ae4681804707c50a3e8186201e";
/// SHA-256 of the held-out bytes.
pub const HELD_OUT_SHA256: &str =
    "84fd3a2d564026695082060f5764a0092d993b8f6025388c6247381feff37f80";

/// The corpus, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corpus {
    /// The training bytes.
    pub train: Vec<u8>,
    /// The held-out bytes.
    pub held_out: Vec<u8>,
    /// Files read (training and held out).
    pub files: usize,
}

/// Where Cargo keeps the archive of `s` under `cargo_home`, if it has it: any registry's
/// cache folder (`registry/cache/index.crates.io-…/name-version.crate`).
pub fn cached_archive(cargo_home: &Path, s: &Source) -> Option<PathBuf> {
    let file = format!("{}-{}.crate", s.name, s.version);
    let dirs = std::fs::read_dir(cargo_home.join("registry").join("cache")).ok()?;
    let mut found: Vec<PathBuf> = dirs
        .filter_map(|d| d.ok())
        .map(|d| d.path().join(&file))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// Cargo's home: `$CARGO_HOME`, else `~/.cargo`.
pub fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Reads the corpus from Cargo's cache under `cargo_home`, checking every archive's and
/// both streams' SHA-256.
///
/// Errors: an archive missing from the cache (run `cargo fetch`, or `cargo xtask train`,
/// which fetches the pinned versions), a checksum that differs, an archive that is not a
/// gzipped tar.
pub fn load(cargo_home: &Path) -> Result<Corpus, Error> {
    let mut files: Vec<Vec<u8>> = Vec::new();
    for s in &SOURCES {
        let path = cached_archive(cargo_home, s).ok_or_else(|| {
            Error::File(format!(
                "{}-{}.crate is not in Cargo's cache under {}: run `cargo fetch` \
                 (or `cargo xtask train`, which fetches it)",
                s.name,
                s.version,
                cargo_home.display()
            ))
        })?;
        let bytes =
            std::fs::read(&path).map_err(|e| Error::File(format!("{}: {e}", path.display())))?;
        let got = hex_sha256(&bytes);
        if got != s.sha256 {
            return Err(Error::File(format!(
                "{} has SHA-256 {got}, not the pinned {}",
                path.display(),
                s.sha256
            )));
        }
        let mut entries =
            rust_files(&bytes).map_err(|e| Error::File(format!("{}: {e}", path.display())))?;
        entries.sort();
        files.extend(entries.into_iter().map(|(_, text)| text));
    }
    let (mut train, mut held_out) = (Vec::new(), Vec::new());
    for (i, f) in files.iter().enumerate() {
        match i % HELD_OUT_EVERY == 0 {
            true => held_out.extend_from_slice(f),
            false => train.extend_from_slice(f),
        }
    }
    for (what, bytes, want) in [
        ("training", &train, TRAIN_SHA256),
        ("held-out", &held_out, HELD_OUT_SHA256),
    ] {
        let got = hex_sha256(bytes);
        if got != want {
            return Err(Error::File(format!(
                "the corpus's {what} bytes have SHA-256 {got}, not the pinned {want}"
            )));
        }
    }
    Ok(Corpus {
        train,
        held_out,
        files: files.len(),
    })
}

/// The `.rs` files of at most [`MAX_FILE`] bytes in a gzipped tar archive, `(path, bytes)`.
fn rust_files(archive: &[u8]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(archive)
        .read_to_end(&mut tar)
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let (mut at, mut long_name): (usize, Option<String>) = (0, None);
    // A tar file: 512-byte headers, each followed by its data padded to 512 bytes.
    while at + 512 <= tar.len() {
        let h = &tar[at..at + 512];
        if h.iter().all(|&b| b == 0) {
            break; // the end-of-archive blocks
        }
        let field = |a: usize, b: usize| {
            let f = &h[a..b];
            let end = f.iter().position(|&c| c == 0).unwrap_or(f.len());
            String::from_utf8_lossy(&f[..end]).into_owned()
        };
        let size = usize::from_str_radix(field(124, 136).trim(), 8)
            .map_err(|_| format!("a bad size at byte {at}"))?;
        let data = tar
            .get(at + 512..at + 512 + size)
            .ok_or("a truncated entry")?;
        let kind = h[156];
        let name = match (long_name.take(), field(345, 500)) {
            (Some(n), _) => n,
            (None, prefix) if !prefix.is_empty() => format!("{prefix}/{}", field(0, 100)),
            (None, _) => field(0, 100),
        };
        match kind {
            // GNU's long name: the next entry's path.
            b'L' => long_name = Some(String::from_utf8_lossy(data).trim_end_matches('\0').into()),
            // A file.
            b'0' | 0 if name.ends_with(".rs") && size <= MAX_FILE => {
                out.push((name, data.to_vec()))
            }
            _ => {}
        }
        at += 512 + size.div_ceil(512) * 512;
    }
    Ok(out)
}

/// The unigram and bigram baselines: bits per byte of `held_out` under byte frequencies
/// counted on `train`, each count plus one (Laplace), `p(b) = (c(b) + 1) / (n + 256)`, and
/// under `p(b | a) = (c(a b) + 1) / (c(a ·) + 256)` (the first held-out byte priced by the
/// unigram). Returns `(unigram, bigram)`.
pub fn baselines(train: &[u8], held_out: &[u8]) -> (f64, f64) {
    let mut uni = [0u64; 256];
    let mut bi = vec![0u64; 256 * 256];
    for &b in train {
        uni[b as usize] += 1;
    }
    for p in train.windows(2) {
        bi[p[0] as usize * 256 + p[1] as usize] += 1;
    }
    let mut from = [0u64; 256];
    for a in 0..256 {
        from[a] = bi[a * 256..(a + 1) * 256].iter().sum();
    }
    let p_uni = |b: u8| (uni[b as usize] + 1) as f64 / (train.len() + 256) as f64;
    let p_bi = |a: u8, b: u8| {
        (bi[a as usize * 256 + b as usize] + 1) as f64 / (from[a as usize] + 256) as f64
    };
    let n = held_out.len() as f64;
    let unigram = held_out.iter().map(|&b| -p_uni(b).log2()).sum::<f64>() / n;
    let first = held_out.first().map_or(0.0, |&b| -p_uni(b).log2());
    let bigram = (first
        + held_out
            .windows(2)
            .map(|p| -p_bi(p[0], p[1]).log2())
            .sum::<f64>())
        / n;
    (unigram, bigram)
}
