//! Reads Litestream's replica files (LTX: a 100-byte header, then each
//! page as a 6-byte header, a 4-byte length and the page compressed as one
//! LZ4 block, until a page header of zeros) to say which hold some bytes.

use std::path::{Path, PathBuf};

/// Every file under `dir` whose pages (or raw bytes) contain `needle`.
pub fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path).is_ok_and(|b| holds(&b, needle)) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Every file under `dir` (LTX or not).
pub fn count_files(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if entry.path().is_dir() {
                stack.push(entry.path());
            } else {
                n += 1;
            }
        }
    }
    n
}

fn holds(bytes: &[u8], needle: &[u8]) -> bool {
    contains(bytes, needle) || pages(bytes).iter().any(|p| contains(p, needle))
}

/// The decompressed pages of an LTX file (none if it is not one).
pub fn pages(b: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if b.len() < 100 || &b[0..4] != b"LTX1" {
        return out;
    }
    let page_size = u32::from_be_bytes([b[8], b[9], b[10], b[11]]) as usize;
    let mut at = 100;
    while at + 10 <= b.len() {
        let pgno = u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        if pgno == 0 {
            break;
        }
        let len = u32::from_be_bytes([b[at + 6], b[at + 7], b[at + 8], b[at + 9]]) as usize;
        at += 10;
        let Some(block) = b.get(at..at + len) else {
            break;
        };
        if let Ok(page) = lz4_flex::block::decompress(block, page_size) {
            out.push(page);
        }
        at += len;
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}
