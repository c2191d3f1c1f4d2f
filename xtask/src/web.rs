//! `cargo xtask web [lectureNN]`: writes `target/web/lectureNN.html`, the lecture as one
//! page that opens from disk (`file://`) with no server and no network.
//!
//! It builds the lecture's WebAssembly crate (`web/lectureNN`, package `lectureNN_web`) for
//! `wasm32-unknown-unknown` in the `web` profile, generates its JavaScript bindings with
//! `wasm-bindgen` (`--target no-modules`), and inlines the bindings, the module (gzip, then
//! base64: the page inflates it with the browser's `DecompressionStream`) and the page's
//! own files (`web/lectureNN/page/`) into one HTML file. Whatever is missing it installs
//! first: the rustup target, and `wasm-bindgen-cli` at the version `Cargo.lock` pins for the
//! `wasm-bindgen` crate (into `target/web-tools/`, a few minutes, once).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;

use crate::{println_out, root};

const TARGET: &str = "wasm32-unknown-unknown";

/// The page's own files, and the placeholder each fills in `index.html`.
const PAGE_FILES: [(&str, &str); 3] = [
    ("/*PAGE_CSS*/", "page.css"),
    ("/*APP_JS*/", "app.js"),
    ("/*WORKER_JS*/", "worker.js"),
];

/// Builds the page of `args[0]` (default `lecture06`); returns where it wrote it.
pub fn web(args: &[String]) -> Result<PathBuf, String> {
    let lecture = match args {
        [] => "lecture06".to_string(),
        [name] => name.clone(),
        _ => return Err("usage: cargo xtask web [lectureNN]".into()),
    };
    let root = root();
    let crate_dir = root.join("web").join(&lecture);
    if !crate_dir.join("Cargo.toml").is_file() {
        return Err(format!(
            "{lecture} has no browser page: no web/{lecture}/Cargo.toml"
        ));
    }
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let target_dir = if target_dir.is_absolute() {
        target_dir
    } else {
        root.join(target_dir)
    };
    ensure_target()?;
    let bindgen = ensure_bindgen(&root, &target_dir)?;
    let package = format!("{lecture}_web");
    run(Command::new(cargo())
        .current_dir(&root)
        .args(["build", "--profile", "web", "--target", TARGET, "-p"])
        .arg(&package))?;
    let wasm = target_dir
        .join(TARGET)
        .join("web")
        .join(format!("{package}.wasm"));
    let pkg = target_dir.join("web").join("pkg");
    run(Command::new(&bindgen)
        .args(["--target", "no-modules", "--no-typescript", "--out-dir"])
        .arg(&pkg)
        .arg(&wasm))?;
    let glue = read(&pkg.join(format!("{package}.js")))?;
    let module = fs::read(pkg.join(format!("{package}_bg.wasm")))
        .map_err(|e| format!("cannot read the bound module: {e}"))?;
    let html = page(&crate_dir.join("page"), &glue, &module)?;
    let out = target_dir.join("web").join(format!("{lecture}.html"));
    fs::write(&out, &html).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    println_out(&format!(
        "wrote {} ({:.2} MB; the module {:.2} MB, {:.2} MB gzipped); open it in a browser",
        out.display(),
        html.len() as f64 / 1e6,
        module.len() as f64 / 1e6,
        gzip(&module)?.len() as f64 / 1e6,
    ));
    Ok(out)
}

/// `index.html` with the page's files, the bindings and the module filled in.
fn page(page_dir: &Path, glue: &str, module: &[u8]) -> Result<String, String> {
    let mut html = read(&page_dir.join("index.html"))?;
    for (mark, file) in PAGE_FILES {
        fill(&mut html, mark, &read(&page_dir.join(file))?)?;
    }
    fill(&mut html, "/*GLUE_JS*/", glue)?;
    let packed = base64::engine::general_purpose::STANDARD.encode(gzip(module)?);
    fill(&mut html, "/*WASM_GZIP_BASE64*/", &packed)?;
    Ok(html)
}

/// Puts `text` where `mark` is; refuses a script that would end its `<script>` early.
fn fill(html: &mut String, mark: &str, text: &str) -> Result<(), String> {
    if !html.contains(mark) {
        return Err(format!("index.html has no {mark}"));
    }
    if text.to_ascii_lowercase().contains("</script") {
        return Err(format!("the text for {mark} contains </script"));
    }
    *html = html.replacen(mark, text, 1);
    Ok(())
}

fn gzip(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(bytes).map_err(|e| e.to_string())?;
    z.finish().map_err(|e| e.to_string())
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn run(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed ({status})"))
    }
}

/// The wasm32 target, through rustup if it is not installed.
fn ensure_target() -> Result<(), String> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    match installed {
        Ok(out) if String::from_utf8_lossy(&out.stdout).contains(TARGET) => Ok(()),
        Ok(_) => run(Command::new("rustup").args(["target", "add", TARGET])),
        // No rustup: the build says whether the target is there.
        Err(_) => Ok(()),
    }
}

/// A `wasm-bindgen` of the version `Cargo.lock` pins: on the `PATH`, in
/// `target/web-tools/bin`, or installed there from crates.io.
fn ensure_bindgen(root: &Path, target_dir: &Path) -> Result<PathBuf, String> {
    let version = locked_version(&read(&root.join("Cargo.lock"))?, "wasm-bindgen")
        .ok_or("Cargo.lock pins no wasm-bindgen")?;
    let tools = target_dir.join("web-tools");
    let local = tools.join("bin").join("wasm-bindgen");
    for candidate in [PathBuf::from("wasm-bindgen"), local.clone()] {
        let out = Command::new(&candidate).arg("--version").output();
        if let Ok(out) = out
            && String::from_utf8_lossy(&out.stdout).trim() == format!("wasm-bindgen {version}")
        {
            return Ok(candidate);
        }
    }
    println_out(&format!(
        "installing wasm-bindgen-cli {version} into {} (once; a few minutes)",
        tools.display()
    ));
    run(Command::new(cargo())
        .args([
            "install",
            "--quiet",
            "wasm-bindgen-cli",
            "--version",
            &version,
        ])
        .arg("--root")
        .arg(&tools))?;
    Ok(local)
}

/// The version `lock` (a `Cargo.lock`) gives `package`.
fn locked_version(lock: &str, package: &str) -> Option<String> {
    let name = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    lines.find(|l| l.trim() == name)?;
    let version = lines.next()?.trim().strip_prefix("version = \"")?;
    Some(version.trim_end_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locked_version_is_read_from_the_package_s_own_entry() {
        let lock = "[[package]]\nname = \"wasm-bindgen-macro\"\nversion = \"9.9.9\"\n\n\
                    [[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.130\"\n";
        assert_eq!(
            locked_version(lock, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
        assert_eq!(locked_version(lock, "serde"), None);
    }

    #[test]
    fn a_placeholder_is_filled_once_and_a_closing_script_tag_is_refused() {
        let mut html = "<script>/*APP_JS*/</script>".to_string();
        fill(&mut html, "/*APP_JS*/", "let a = 1;").unwrap();
        assert_eq!(html, "<script>let a = 1;</script>");
        assert!(
            fill(&mut html, "/*APP_JS*/", "x").is_err(),
            "already filled"
        );
        let mut html = "<script>/*APP_JS*/</script>".to_string();
        let err = fill(&mut html, "/*APP_JS*/", "s = '</SCRIPT>'").unwrap_err();
        assert!(err.contains("</script"), "{err}");
    }
}
