//! What the operating system says about this machine: its cache sizes and its memory.
//!
//! Linux publishes each cache of a CPU under
//! `/sys/devices/system/cpu/cpu0/cache/index*/` (files `level`, `type`, `size`, e.g.
//! `3`, `Unified`, `32768K`) and the memory in `/proc/meminfo` (`MemTotal: … kB`). Where
//! they cannot be read (another OS, a container hiding them) the figures are `None`, and
//! [`CacheSizes::source`] says why.

use std::fs;
use std::path::Path;

/// The data caches of CPU 0, bytes (per core for L1 and L2; L3 as the OS reports it,
/// usually shared).
#[derive(Debug, Clone, PartialEq)]
pub struct CacheSizes {
    /// Level-1 data cache.
    pub l1d: Option<u64>,
    /// Level-2 cache (unified).
    pub l2: Option<u64>,
    /// Level-3 cache (unified, usually shared by all cores).
    pub l3: Option<u64>,
    /// Where the figures came from, or why they could not be read.
    pub source: String,
}

impl CacheSizes {
    /// The largest cache that was read (L3, else L2, else L1), bytes.
    pub fn last_level(&self) -> Option<u64> {
        self.l3.or(self.l2).or(self.l1d)
    }
}

const CACHE_DIR: &str = "/sys/devices/system/cpu/cpu0/cache";

/// Reads CPU 0's cache sizes from `/sys` (see the module documentation). Never fails:
/// what cannot be read is `None`, and `source` says so.
pub fn cache_sizes() -> CacheSizes {
    cache_sizes_in(Path::new(CACHE_DIR))
}

/// [`cache_sizes`] from another directory laid out like `/sys/…/cache` (for tests).
pub fn cache_sizes_in(dir: &Path) -> CacheSizes {
    let mut sizes = CacheSizes {
        l1d: None,
        l2: None,
        l3: None,
        source: String::new(),
    };
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            sizes.source = format!("could not read {}: {e}", dir.display());
            return sizes;
        }
    };
    let mut found = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let is_index = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("index"));
        if !is_index {
            continue;
        }
        let read = |f: &str| fs::read_to_string(path.join(f)).map(|s| s.trim().to_string());
        let (Ok(level), Ok(kind), Ok(size)) = (read("level"), read("type"), read("size")) else {
            continue;
        };
        let Some(bytes) = parse_size(&size) else {
            continue;
        };
        let slot = match (level.as_str(), kind.as_str()) {
            ("1", "Data" | "Unified") => &mut sizes.l1d,
            ("2", "Unified" | "Data") => &mut sizes.l2,
            ("3", "Unified" | "Data") => &mut sizes.l3,
            _ => continue,
        };
        *slot = Some(bytes);
        found += 1;
    }
    sizes.source = if found == 0 {
        format!("no cache sizes found under {}", dir.display())
    } else {
        format!("read from {}/index*/{{level,type,size}}", dir.display())
    };
    sizes
}

/// `"32K"`, `"512K"`, `"32768K"`, `"1M"`, `"64"` → bytes (powers of 1024, as the kernel
/// writes them). `None` for anything else.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "K" | "KB" | "KiB" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        "G" | "GB" | "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// This machine's RAM, bytes (`MemTotal` of `/proc/meminfo`), or why it could not be read.
pub fn memory_bytes() -> Result<u64, String> {
    let text = fs::read_to_string("/proc/meminfo")
        .map_err(|e| format!("could not read /proc/meminfo: {e}"))?;
    parse_meminfo(&text).ok_or_else(|| "no MemTotal line in /proc/meminfo".to_string())
}

/// `MemTotal` of a `/proc/meminfo` text, bytes (the file counts in kB = 1024 bytes).
pub fn parse_meminfo(text: &str) -> Option<u64> {
    parse_meminfo_field(text, "MemTotal:")
}

/// Whether this process can hold `bytes` in all for `what` (what it holds already
/// included): its address-space limit (`ulimit -v`, the soft "Max address space" of
/// `/proc/self/limits`), its control group's memory limit (`/sys/fs/cgroup/memory.max`,
/// in a container, less what others in the group use: `memory.current` less this
/// process's resident `VmRSS`) and the memory the system could give it (`MemAvailable`
/// of `/proc/meminfo` plus its `VmRSS`). An allocation beyond any of them aborts the
/// process with no clear line; this refuses first, naming the figure. Where a file cannot
/// be read (not Linux, cgroup v1), that limit is not checked.
pub fn check_room(what: &str, bytes: u64) -> Result<(), crate::Error> {
    let read = |path: &str| fs::read_to_string(path).ok();
    let number = |path: &str| read(path).and_then(|t| t.trim().parse::<u64>().ok());
    let resident = read("/proc/self/status")
        .and_then(|t| parse_meminfo_field(&t, "VmRSS:"))
        .unwrap_or(0);
    let address_space = read("/proc/self/limits").and_then(|t| parse_address_limit(&t));
    let others = number("/sys/fs/cgroup/memory.current").map_or(0, |c| c.saturating_sub(resident));
    let cgroup = number("/sys/fs/cgroup/memory.max").map(|max| max.saturating_sub(others));
    let available = read("/proc/meminfo")
        .and_then(|t| parse_meminfo_field(&t, "MemAvailable:"))
        .map(|a| a.saturating_add(resident));
    let limits = [
        ("address-space limit", address_space),
        ("share of its control group's memory", cgroup),
        ("memory the system can give", available),
    ];
    for (name, have) in limits {
        if let Some(have) = have.filter(|&h| h < bytes) {
            return Err(crate::Error::Argument(format!(
                "{what} needs about {:.2} GB, and this process's {name} is {:.2} GB",
                bytes as f64 / 1e9,
                have as f64 / 1e9
            )));
        }
    }
    Ok(())
}

/// The soft "Max address space" of a `/proc/self/limits` text, bytes; `None` when
/// unlimited or absent.
pub fn parse_address_limit(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line.trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A `NAME: N kB` field of a `/proc/meminfo` text, bytes.
fn parse_meminfo_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kb: u64 = line[name.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), or `None` where they cannot
/// be read. On a shared host they say how much the measurements competed with others.
pub fn load_average() -> Option<[f64; 3]> {
    parse_loadavg(&fs::read_to_string("/proc/loadavg").ok()?)
}

/// The three load averages at the start of a `/proc/loadavg` text.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(|w| w.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_as_the_kernel_writes_them() {
        assert_eq!(parse_size("32K"), Some(32 * 1024));
        assert_eq!(parse_size("32768K\n"), Some(32 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("64"), Some(64));
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size("K"), None);
    }

    #[test]
    fn load_averages_are_the_first_three_fields() {
        assert_eq!(
            parse_loadavg("0.52 1.30 2.00 1/345 678\n"),
            Some([0.52, 1.3, 2.0])
        );
        assert_eq!(parse_loadavg("0.52 x"), None);
    }

    #[test]
    fn meminfo_total_is_in_kibibytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:        100 kB\n";
        assert_eq!(parse_meminfo(text), Some(24_576_000 * 1024));
        assert_eq!(parse_meminfo("MemFree: 1 kB"), None);
    }

    #[test]
    fn a_cache_directory_is_read_by_level_and_type_and_a_missing_one_says_so() {
        let dir = std::env::temp_dir().join(format!("host_lab_cache_{}", std::process::id()));
        for (i, level, kind, size) in [
            (0, "1", "Data", "48K"),
            (1, "1", "Instruction", "32K"),
            (2, "2", "Unified", "2048K"),
            (3, "3", "Unified", "96M"),
        ] {
            let d = dir.join(format!("index{i}"));
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("level"), format!("{level}\n")).unwrap();
            fs::write(d.join("type"), format!("{kind}\n")).unwrap();
            fs::write(d.join("size"), format!("{size}\n")).unwrap();
        }
        let c = cache_sizes_in(&dir);
        assert_eq!(
            (c.l1d, c.l2, c.l3),
            (Some(48 << 10), Some(2 << 20), Some(96 << 20))
        );
        assert_eq!(c.last_level(), Some(96 << 20));
        fs::remove_dir_all(&dir).unwrap();
        let none = cache_sizes_in(&dir);
        assert_eq!((none.l1d, none.last_level()), (None, None));
        assert!(none.source.starts_with("could not read"), "{}", none.source);
    }

    #[test]
    fn the_address_space_limit_is_read_when_set_and_none_when_unlimited() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max address space         1073741824           unlimited            bytes\n";
        assert_eq!(parse_address_limit(limits), Some(1 << 30));
        let unlimited = limits.replace("1073741824", "unlimited");
        assert_eq!(parse_address_limit(&unlimited), None);
        let meminfo = "MemTotal: 100 kB\nMemAvailable:   23825404 kB\n";
        assert_eq!(
            parse_meminfo_field(meminfo, "MemAvailable:"),
            Some(23_825_404 * 1024)
        );
        assert!(check_room("nothing", 0).is_ok());
        let e = check_room("the universe", u64::MAX)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("the universe needs about"), "{e}");
    }
}
