//! Reading a zip archive in memory, bounded: what GitHub serves for a workflow run's artifact
//! (`actions/upload-artifact` writes one zip with the uploaded files). Only what artifacts use
//! is read: stored and deflated entries, found through the central directory (so entries whose
//! sizes follow their data, as streaming writers leave them, are read too). ZIP64 archives,
//! encrypted entries and other methods are refused; an entry is never inflated past its bound.

use std::io::Read;

/// One file of an archive: its path and bytes.
pub type Entry = (String, Vec<u8>);

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The files of `zip` that `wanted` selects by path (directories skipped), at most
/// `max_files` of them and each at most `max_bytes` once inflated: a larger one is an error,
/// never cut.
pub fn entries(
    zip: &[u8],
    wanted: impl Fn(&str) -> bool,
    max_files: usize,
    max_bytes: u64,
) -> Result<Vec<Entry>, String> {
    const EOCD: u32 = 0x0605_4b50;
    let from = zip.len().saturating_sub(22 + 65_535);
    let eocd = (from..zip.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(zip, i) == Some(EOCD))
        .ok_or("not a zip archive (no end of central directory)")?;
    let bad = || "a damaged zip archive".to_string();
    let total = u16_at(zip, eocd + 10).ok_or_else(bad)?;
    let cd_offset = u32_at(zip, eocd + 16).ok_or_else(bad)?;
    if total == u16::MAX || cd_offset == u32::MAX {
        return Err("a ZIP64 archive, which is not read".into());
    }
    let mut at = cd_offset as usize;
    let mut out = Vec::new();
    for _ in 0..total {
        if u32_at(zip, at) != Some(0x0201_4b50) {
            return Err(bad());
        }
        let flags = u16_at(zip, at + 8).ok_or_else(bad)?;
        let method = u16_at(zip, at + 10).ok_or_else(bad)?;
        let csize = u32_at(zip, at + 20).ok_or_else(bad)? as usize;
        let usize_ = u32_at(zip, at + 24).ok_or_else(bad)? as u64;
        let n = u16_at(zip, at + 28).ok_or_else(bad)? as usize;
        let e = u16_at(zip, at + 30).ok_or_else(bad)? as usize;
        let c = u16_at(zip, at + 32).ok_or_else(bad)? as usize;
        let local = u32_at(zip, at + 42).ok_or_else(bad)? as usize;
        let name = zip.get(at + 46..at + 46 + n).ok_or_else(bad)?;
        let name = String::from_utf8_lossy(name).to_string();
        at += 46 + n + e + c;
        if name.ends_with('/') || !wanted(&name) {
            continue;
        }
        if out.len() >= max_files {
            break;
        }
        if flags & 1 != 0 {
            return Err(format!("{name}: encrypted"));
        }
        if usize_ > max_bytes {
            return Err(format!("{name}: larger than {max_bytes} bytes"));
        }
        if u32_at(zip, local) != Some(0x0403_4b50) {
            return Err(bad());
        }
        let ln = u16_at(zip, local + 26).ok_or_else(bad)? as usize;
        let le = u16_at(zip, local + 28).ok_or_else(bad)? as usize;
        let start = local + 30 + ln + le;
        let data = zip.get(start..start + csize).ok_or_else(bad)?;
        let mut bytes = Vec::new();
        match method {
            0 => bytes.extend_from_slice(data),
            8 => {
                flate2::read::DeflateDecoder::new(data)
                    .take(max_bytes + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("{name}: {e}"))?;
            }
            m => return Err(format!("{name}: compression method {m}, which is not read")),
        }
        if bytes.len() as u64 > max_bytes {
            return Err(format!("{name}: larger than {max_bytes} bytes"));
        }
        out.push((name, bytes));
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// A zip as a streaming writer makes it: each entry deflated (or stored), its sizes in a
    /// data descriptor after the data and zero in the local header, then the central
    /// directory.
    pub fn zip(files: &[(&str, &[u8], bool)]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, bytes, deflate) in files {
            let data = if *deflate {
                let mut e =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(bytes).unwrap();
                e.finish().unwrap()
            } else {
                bytes.to_vec()
            };
            let method: u16 = if *deflate { 8 } else { 0 };
            let crc = crc32(bytes);
            let offset = out.len() as u32;
            out.extend(0x0403_4b50u32.to_le_bytes());
            out.extend(20u16.to_le_bytes());
            out.extend(8u16.to_le_bytes()); // sizes in the data descriptor
            out.extend(method.to_le_bytes());
            out.extend([0u8; 4]); // time, date
            out.extend([0u8; 12]); // crc, sizes: zero here
            out.extend((name.len() as u16).to_le_bytes());
            out.extend(0u16.to_le_bytes());
            out.extend(name.as_bytes());
            out.extend(&data);
            out.extend(0x0807_4b50u32.to_le_bytes());
            out.extend(crc.to_le_bytes());
            out.extend((data.len() as u32).to_le_bytes());
            out.extend((bytes.len() as u32).to_le_bytes());
            central.extend(0x0201_4b50u32.to_le_bytes());
            central.extend(20u16.to_le_bytes());
            central.extend(20u16.to_le_bytes());
            central.extend(8u16.to_le_bytes());
            central.extend(method.to_le_bytes());
            central.extend([0u8; 4]);
            central.extend(crc.to_le_bytes());
            central.extend((data.len() as u32).to_le_bytes());
            central.extend((bytes.len() as u32).to_le_bytes());
            central.extend((name.len() as u16).to_le_bytes());
            central.extend([0u8; 8]); // extra, comment, disk, internal attributes
            central.extend([0u8; 4]); // external attributes
            central.extend(offset.to_le_bytes());
            central.extend(name.as_bytes());
        }
        let cd_offset = out.len() as u32;
        out.extend(&central);
        out.extend(0x0605_4b50u32.to_le_bytes());
        out.extend([0u8; 4]);
        out.extend((files.len() as u16).to_le_bytes());
        out.extend((files.len() as u16).to_le_bytes());
        out.extend((central.len() as u32).to_le_bytes());
        out.extend(cd_offset.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out
    }

    fn crc32(b: &[u8]) -> u32 {
        let mut c = !0u32;
        for &x in b {
            c ^= x as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0xEDB8_8320
                } else {
                    c >> 1
                };
            }
        }
        !c
    }

    #[test]
    fn stored_and_deflated_entries_are_read_through_the_central_directory() {
        let z = zip(&[
            ("results/junit_01.xml", b"<testsuite/>", true),
            ("dir/", b"", false),
            ("notes.txt", b"hello", false),
        ]);
        let all = entries(&z, |_| true, 10, 1024).unwrap();
        assert_eq!(
            all,
            [
                ("results/junit_01.xml".to_string(), b"<testsuite/>".to_vec()),
                ("notes.txt".to_string(), b"hello".to_vec())
            ]
        );
        let xml = entries(&z, |n| n.ends_with(".xml"), 10, 1024).unwrap();
        assert_eq!(xml.len(), 1);
    }

    /// A zip written by another implementation (Python's `zipfile` to a stream that cannot
    /// seek, so with data descriptors, as `actions/upload-artifact` streams its zip).
    #[test]
    fn a_streamed_zip_of_another_writer_is_read() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/github/artifact-streamed.zip"
        );
        let z = std::fs::read(path).unwrap();
        let xml = entries(&z, |n| n.ends_with(".xml"), 10, 1 << 20).unwrap();
        assert_eq!(xml.len(), 1);
        assert_eq!(xml[0].0, "results/junit_01.xml");
        assert!(String::from_utf8_lossy(&xml[0].1).contains("<failure/>"));
        let log = entries(&z, |n| n == "log.txt", 10, 1 << 20).unwrap();
        assert_eq!(log[0].1, vec![b'x'; 1000]);
    }

    #[test]
    fn bounds_hold_and_garbage_is_refused() {
        let big = vec![b'a'; 4096];
        let z = zip(&[("big.xml", &big, true)]);
        let e = entries(&z, |_| true, 10, 1000).unwrap_err();
        assert!(e.contains("larger than 1000"), "{e}");
        let two = zip(&[("a.xml", b"1", false), ("b.xml", b"2", false)]);
        assert_eq!(entries(&two, |_| true, 1, 10).unwrap().len(), 1);
        assert!(entries(b"not a zip at all", |_| true, 1, 10).is_err());
        assert!(entries(&z[..z.len() / 2], |_| true, 1, 10_000).is_err());
    }
}
