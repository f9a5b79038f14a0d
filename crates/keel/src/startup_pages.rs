//! Handing back the pages of code that only start-up ran.
//!
//! The kernel maps an executable's code into memory 64 KiB around each
//! first use (fault-around), and start-up (configuration, migrations,
//! building five routers and their OpenAPI documents) runs code from all
//! over the binary: about 300 first uses, 19 MiB of a 30 MiB text section
//! resident before the first request, most of it never run again. Once the
//! services are up, keel asks the kernel to reclaim its code and the
//! read-only data before it (`MADV_PAGEOUT`); what requests run comes back
//! on first use, from the page cache or the disk. These pages are clean,
//! so nothing is written anywhere; the kernel does the same on its own when
//! memory runs short. What idle keel runs (the job worker's polls, timers)
//! brings back about 8 MiB of it within seconds. Idle resident memory of
//! `keel serve` on SQLite: 34.4 -> 24.0 MiB (docs/performance.md).

use std::path::Path;

/// Asks the kernel to reclaim the executable's code pages; returns how
/// many bytes of mappings were handed over (0 where this is not Linux, or
/// the mappings cannot be read).
pub fn release() -> usize {
    #[cfg(target_os = "linux")]
    {
        let Ok(exe) = std::fs::read_link("/proc/self/exe") else {
            return 0;
        };
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
            return 0;
        };
        code_ranges(&maps, &exe)
            .into_iter()
            .filter(|&(start, end)| page_out(start, end))
            .map(|(start, end)| end - start)
            .sum()
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// The executable's code (`r-xp`) and the read-only mappings before it
/// (headers, constants, unwind tables). Not the read-only mappings after
/// it: those hold relocated data (`.data.rel.ro`), private copies that
/// paging out would send to swap.
fn code_ranges(maps: &str, exe: &Path) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    for line in maps.lines() {
        let mut fields = line.splitn(6, ' ');
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else {
            continue;
        };
        let path = fields.nth(3).map(str::trim_start);
        if path != exe.to_str() {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        match perms {
            "r--p" => ranges.push((start, end)),
            "r-xp" => {
                ranges.push((start, end));
                break;
            }
            _ => {}
        }
    }
    ranges
}

#[cfg(target_os = "linux")]
fn page_out(start: usize, end: usize) -> bool {
    // SAFETY: the range is a mapping of this process's executable, read
    // from /proc/self/maps; MADV_PAGEOUT only drops clean file pages from
    // memory (they are read back on next use) and never changes what the
    // mapping reads as.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT) };
    rc == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0a0000000-55d0a0c33000 r--p 00000000 fe:00 10118447                   /opt/keel/bin/keel
55d0a0c33000-55d0a2acf000 r-xp 00c33000 fe:00 10118447                   /opt/keel/bin/keel
55d0a2acf000-55d0a2c7e000 r--p 02ace000 fe:00 10118447                   /opt/keel/bin/keel
55d0a2c7e000-55d0a2c8c000 rw-p 02c7c000 fe:00 10118447                   /opt/keel/bin/keel
7f6df2463000-7f6df246b000 r-xp 00000000 fe:00 10010730                   /usr/lib/libc.so.6
";

    #[test]
    fn the_code_and_the_read_only_data_before_it_are_handed_back_and_nothing_else() {
        let ranges = code_ranges(MAPS, Path::new("/opt/keel/bin/keel"));
        assert_eq!(
            ranges,
            vec![
                (0x55d0_a000_0000, 0x55d0_a0c3_3000),
                (0x55d0_a0c3_3000, 0x55d0_a2ac_f000)
            ]
        );
    }

    #[test]
    fn another_files_mappings_are_left_alone() {
        assert!(code_ranges(MAPS, Path::new("/usr/bin/other")).is_empty());
    }
}
