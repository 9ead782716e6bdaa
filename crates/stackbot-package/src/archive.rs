//! Deterministic tar and gzip writers (and a reader for checks and vendored subcharts).
//!
//! csctl's archives carry `time.Now()` and the temp files' owners, so no two runs agree. Ours
//! are a pure function of the entries: USTAR headers with mtime 0, uid/gid 0, empty
//! uname/gname, mode 0644 for files and 0755 for directories (the tar defaults of a
//! typical umask; helm writes 0644 files too, csctl's 0600/0750 carry no meaning), and a gzip
//! header with mtime 0 and OS byte 255 ("unknown", what Go writes).

use std::io::{Read, Write};

use flate2::{Compression, GzBuilder};

/// File mode of every regular file we archive.
pub const FILE_MODE: u32 = 0o644;
/// File mode of every directory entry we archive.
pub const DIR_MODE: u32 = 0o755;

/// One tar entry, in the order it will be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TarEntry<'a> {
    /// A directory entry (`TypeDir`), written without a trailing slash as csctl does.
    Dir(&'a str),
    /// A regular file (`TypeReg`).
    File(&'a str, &'a [u8]),
}

/// Write a tar stream (no compression) with fixed metadata.
pub fn tar(entries: &[TarEntry<'_>]) -> std::io::Result<Vec<u8>> {
    let mut b = tar::Builder::new(Vec::new());
    b.mode(tar::HeaderMode::Deterministic);
    for e in entries {
        let mut h = tar::Header::new_ustar();
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        let (path, data, kind, mode): (&str, &[u8], _, _) = match *e {
            TarEntry::Dir(p) => (p, &[], tar::EntryType::Directory, DIR_MODE),
            TarEntry::File(p, d) => (p, d, tar::EntryType::Regular, FILE_MODE),
        };
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_size(data.len() as u64);
        b.append_data(&mut h, path, data)?;
    }
    b.into_inner()
}

/// Optional gzip header fields (helm sets both; csctl's addon tar sets neither).
#[derive(Debug, Clone, Copy, Default)]
pub struct GzipHeader<'a> {
    pub extra: Option<&'a [u8]>,
    pub comment: Option<&'a str>,
}

/// gzip `data` deterministically (default level, header mtime 0).
pub fn gzip(data: &[u8], header: GzipHeader<'_>) -> std::io::Result<Vec<u8>> {
    let mut gb = GzBuilder::new().mtime(0).operating_system(255);
    if let Some(x) = header.extra {
        gb = gb.extra(x);
    }
    if let Some(c) = header.comment {
        gb = gb.comment(c);
    }
    let mut w = gb.write(
        Vec::with_capacity(data.len() / 3 + 64),
        Compression::default(),
    );
    w.write_all(data)?;
    w.finish()
}

/// An entry read back from an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadEntry {
    pub name: String,
    /// `None` for directories.
    pub data: Option<Vec<u8>>,
    pub kind: tar::EntryType,
    pub mode: u32,
    pub mtime: u64,
}

/// Helm's bounds on expanding a chart archive (`loader.MaxDecompressedChartSize` and
/// `MaxDecompressedFileSize` in `pkg/chart/loader/archive.go`). A vendored subchart comes from
/// a chart repository nobody here controls, and a few kilobytes of gzip can expand to
/// gigabytes; Helm refuses a chart past these, so the port refuses it too, before the memory
/// is spent.
pub const MAX_DECOMPRESSED_CHART: u64 = 100 * 1024 * 1024;
/// See [`MAX_DECOMPRESSED_CHART`].
pub const MAX_DECOMPRESSED_FILE: u64 = 5 * 1024 * 1024;

/// Read every entry of a `.tgz` (vendored subcharts, and checks in tests), within Helm's
/// bounds ([`MAX_DECOMPRESSED_CHART`], [`MAX_DECOMPRESSED_FILE`]).
pub fn read_tgz(bytes: &[u8]) -> std::io::Result<Vec<ReadEntry>> {
    read_tgz_within(bytes, MAX_DECOMPRESSED_CHART, MAX_DECOMPRESSED_FILE)
}

/// [`read_tgz`] with the bounds given, checked as Helm's `LoadArchiveFiles` checks them: each
/// file's declared size against what is left and against the per-file bound before it is
/// read, then what was read (a chart that exactly fills `chart_max` is refused, as Helm's
/// `remainingSize <= 0` refuses it). Extension headers do not count, as in Helm.
fn read_tgz_within(bytes: &[u8], chart_max: u64, file_max: u64) -> std::io::Result<Vec<ReadEntry>> {
    let over = |what: String| std::io::Error::other(format!("{what} (Helm refuses it too)"));
    let whole = || format!("the decompressed chart is larger than the maximum size {chart_max}");
    let mut a = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut out = Vec::new();
    let mut remaining = chart_max;
    for e in a.entries()? {
        let mut e = e?;
        let name = String::from_utf8_lossy(&e.path_bytes()).into_owned();
        let kind = e.header().entry_type();
        let mode = e.header().mode()?;
        let mtime = e.header().mtime()?;
        let data = if kind.is_dir() {
            None
        } else if matches!(
            kind,
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader
        ) {
            let mut v = Vec::new();
            (&mut e).take(file_max).read_to_end(&mut v)?;
            Some(v)
        } else {
            let size = e.header().size()?;
            if size > remaining {
                return Err(over(whole()));
            }
            if size > file_max {
                return Err(over(format!(
                    "the decompressed chart file `{name}` is larger than the maximum file size {file_max}"
                )));
            }
            let mut v = Vec::new();
            (&mut e).take(remaining).read_to_end(&mut v)?;
            remaining -= v.len() as u64;
            if (v.len() as u64) < size || remaining == 0 {
                return Err(over(whole()));
            }
            Some(v)
        };
        out.push(ReadEntry {
            name,
            data,
            kind,
            mode,
            mtime,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tar_round_trips_with_fixed_metadata_and_long_names() {
        let long = format!("{}/{}", "d".repeat(90), "f".repeat(60));
        let entries = [
            TarEntry::Dir("ccm"),
            TarEntry::File("ccm/Chart.yaml", b"name: x\n"),
            TarEntry::File(&long, b""),
        ];
        let tgz = gzip(&tar(&entries).unwrap(), GzipHeader::default()).unwrap();
        let back = read_tgz(&tgz).unwrap();
        let names: Vec<_> = back.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["ccm", "ccm/Chart.yaml", long.as_str()]);
        assert!(back[0].kind.is_dir() && back[0].mode == DIR_MODE);
        assert_eq!(back[1].data.as_deref(), Some(b"name: x\n".as_slice()));
        assert!(back.iter().all(|e| e.mtime == 0));
        assert_eq!(back[1].mode, FILE_MODE);
    }

    /// A vendored subchart is expanded only as far as Helm expands one: a file over 5 MiB, or
    /// a chart over 100 MiB in all, is refused (naming the file, or the bound) before its
    /// bytes are held, however small the gzip (these are kilobytes of zeros).
    #[test]
    fn an_archive_is_expanded_only_within_helms_bounds() {
        let big = vec![0u8; MAX_DECOMPRESSED_FILE as usize + 1];
        let bomb = [
            TarEntry::File("c/Chart.yaml", b"name: c\n"),
            TarEntry::File("c/big", &big),
        ];
        let tgz = gzip(&tar(&bomb).unwrap(), GzipHeader::default()).unwrap();
        assert!(tgz.len() < 64 * 1024, "{} bytes", tgz.len());
        let e = read_tgz(&tgz).unwrap_err().to_string();
        assert!(
            e.contains("`c/big` is larger than the maximum file size 5242880"),
            "{e}"
        );
        // At the file bound it is read.
        let at = vec![0u8; MAX_DECOMPRESSED_FILE as usize];
        let ok = [TarEntry::File("c/at", &at)];
        let tgz = gzip(&tar(&ok).unwrap(), GzipHeader::default()).unwrap();
        assert_eq!(
            read_tgz(&tgz).unwrap()[0].data.as_ref().unwrap().len(),
            at.len()
        );
        // The whole: the declared size against what is left, and a chart that fills it.
        let files = [
            TarEntry::File("c/a", &[1; 40]),
            TarEntry::File("c/b", &[2; 40]),
        ];
        let tgz = gzip(&tar(&files).unwrap(), GzipHeader::default()).unwrap();
        let e = read_tgz_within(&tgz, 79, 50).unwrap_err().to_string();
        assert!(e.contains("larger than the maximum size 79"), "{e}");
        assert!(
            read_tgz_within(&tgz, 80, 50).is_err(),
            "exactly full is refused, as in Helm"
        );
        assert_eq!(read_tgz_within(&tgz, 81, 50).unwrap().len(), 2);
        assert!(
            read_tgz_within(&tgz, 81, 39).is_err(),
            "each file against its bound"
        );
    }

    #[test]
    fn archives_are_byte_identical_across_runs() {
        let entries = [TarEntry::File("a", b"hello")];
        let one = gzip(&tar(&entries).unwrap(), GzipHeader::default()).unwrap();
        let two = gzip(&tar(&entries).unwrap(), GzipHeader::default()).unwrap();
        assert_eq!(one, two);
        // gzip header: magic, deflate, flags 0, mtime 0, xfl, OS 255.
        assert_eq!(&one[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
    }

    #[test]
    fn gzip_carries_helm_extra_and_comment() {
        let gz = gzip(
            b"x",
            GzipHeader {
                extra: Some(b"+abc"),
                comment: Some("Helm"),
            },
        )
        .unwrap();
        let d = flate2::read::GzDecoder::new(gz.as_slice());
        let h = d.header().unwrap();
        assert_eq!(h.extra(), Some(b"+abc".as_slice()));
        assert_eq!(h.comment(), Some(b"Helm".as_slice()));
        assert_eq!(h.mtime(), 0);
    }
}
