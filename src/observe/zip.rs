//! Reading a zip archive in memory, bounded: what GitHub serves for a workflow run's artifact
//! (`actions/upload-artifact` writes one zip with the uploaded files). The `zip` crate reads
//! the archive (central directory, data descriptors of streaming writers, ZIP64, CRC checks);
//! this module only adds the bounds: at most `max_files` selected files, each at most
//! `max_bytes` once inflated, and an entry is never inflated past its bound.

use std::io::{Cursor, Read};

/// One file of an archive: its path and bytes.
pub type Entry = (String, Vec<u8>);

/// The files of `zip` that `wanted` selects by path (directories skipped), at most
/// `max_files` of them and each at most `max_bytes` once inflated: a larger one is an error,
/// never cut.
pub fn entries(
    zip: &[u8],
    wanted: impl Fn(&str) -> bool,
    max_files: usize,
    max_bytes: u64,
) -> Result<Vec<Entry>, String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(zip))
        .map_err(|e| format!("not a readable zip archive: {e}"))?;
    let mut out = Vec::new();
    for i in 0..archive.len() {
        if out.len() >= max_files {
            break;
        }
        let file = archive
            .by_index(i)
            .map_err(|e| format!("a damaged zip archive: {e}"))?;
        let name = file
            .name()
            .map_err(|e| format!("a zip entry whose name cannot be read: {e}"))?
            .into_owned();
        if file.is_dir() || !wanted(&name) {
            continue;
        }
        if file.size() > max_bytes {
            return Err(format!("{name}: larger than {max_bytes} bytes"));
        }
        let mut bytes = Vec::new();
        file.take(max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{name}: {e}"))?;
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
    /// data descriptor after the data, then the central directory.
    pub fn zip(files: &[(&str, &[u8], bool)]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new_stream(Vec::new());
        for (name, bytes, deflate) in files {
            let method = if *deflate {
                zip::CompressionMethod::Deflated
            } else {
                zip::CompressionMethod::Stored
            };
            let options = zip::write::SimpleFileOptions::default().compression_method(method);
            if name.ends_with('/') {
                w.add_directory(*name, options).unwrap();
            } else {
                w.start_file(*name, options).unwrap();
                w.write_all(bytes).unwrap();
            }
        }
        w.finish().unwrap().into_inner()
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
