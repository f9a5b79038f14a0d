//! Reads Litestream's replica files (LTX: a 100-byte header, then each
//! page as a 6-byte header, a 4-byte length and the page compressed as one
//! LZ4 block, until a page header of zeros), so the testkit's scan finds
//! what their pages hold.

use std::path::{Path, PathBuf};

use keel_testkit::scan;

/// Every file under `dir` whose bytes, or pages if it is an LTX file,
/// hold `needle`.
pub fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let readable: Vec<(PathBuf, Vec<u8>)> = scan::every_file(dir)
        .into_iter()
        .map(|(path, mut bytes)| {
            let pages = pages(&bytes);
            bytes.extend(pages.into_iter().flatten());
            (path, bytes)
        })
        .collect();
    scan::files_holding(&readable, needle)
        .into_iter()
        .map(Path::to_owned)
        .collect()
}

/// How many files are under `dir`.
pub fn count_files(dir: &Path) -> usize {
    scan::every_file(dir).len()
}

/// The decompressed pages of an LTX file (none if it is not one).
fn pages(b: &[u8]) -> Vec<Vec<u8>> {
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
