//! The model's fingerprint: FNV-1a (64-bit) over every file under `src/` (its path and its
//! bytes, in path order), so two builds of the same sources agree and any source change
//! gives another value. `mptcplab_core::MODEL` carries it; results record it beside the
//! version, and a sweep store refuses points of another model (a resumed sweep never mixes
//! results of two models silently).

use std::fs;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    // The directory cargo runs this script for, read when it runs: a build script
    // compiled for another checkout sharing the target directory (a git worktree) is
    // reused by cargo, and its compile-time `env!` named that checkout, which once gave
    // the fingerprint of no files at all.
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = root.as_path();
    let src = root.join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    assert!(!all.is_empty(), "no sources under {}", src.display());
    all.sort();
    // FNV-1a 64 (offset basis and prime from the FNV reference, draft-eastlake-fnv §2).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for p in &all {
        let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/");
        eat(rel.as_bytes());
        eat(&[0]);
        eat(&fs::read(p).unwrap_or_default());
        eat(&[0]);
    }
    println!("cargo:rustc-env=MPTCPLAB_MODEL={h:016x}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");
}
