//! The program's one crash-safe file write, for every crate that writes files (the local
//! forge's records and the working tree through the forge crate, upstream snapshots and the
//! answer cache here): a crash, a full disk or a second writer never leaves half a file where
//! the next run reads one. [`write_atomic`] also syncs the file before it takes the old one's
//! place, for what must survive a power loss; [`replace_with`] is the same without, for the
//! cache. It lives in the lowest crate with I/O, since core has none.

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` crash-safely: into a temporary file in the same directory
/// (created if missing; its name unique to the process and the call, so concurrent writers
/// never share one), then fsync and rename over `path`. On any failure the temporary file is
/// removed and `path` is as it was.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, true, |w| w.write_all(bytes))
}

/// [`write_atomic`] of what `fill` writes (streamed, buffered), without the fsync: for a file
/// that only saves work (the answer cache). No process crash leaves half of it, and after a
/// power loss it may be empty, which its reader takes as a miss. A run stores dozens of
/// answers, and the year's simulation hundreds of thousands; the local forge's records need
/// an fsync each to be durable, a cache does not.
pub fn replace_with(
    path: &Path,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    replace(path, false, fill)
}

fn replace(
    path: &Path,
    sync: bool,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{name}.tmp.{}.{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let written = std::fs::File::create(&tmp).and_then(|f| {
        let mut w = std::io::BufWriter::new(f);
        fill(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        if sync { f.sync_all() } else { Ok(()) }
    });
    written
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("file.txt");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(names(&dir.path().join("sub")), ["file.txt"]);
    }

    #[test]
    fn a_failed_fill_keeps_the_old_file_and_removes_its_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file.txt");
        write_atomic(&path, b"kept").unwrap();
        let e = replace(&path, true, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("the disk is full"))
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "the disk is full");
        assert_eq!(std::fs::read(&path).unwrap(), b"kept");
        assert_eq!(names(dir.path()), ["file.txt"]);
        replace_with(&path, |_| Err(std::io::Error::other("full again"))).unwrap_err();
        replace_with(&dir.path().join("cache.json"), |w| w.write_all(b"{}")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"kept");
        assert_eq!(names(dir.path()), ["cache.json", "file.txt"]);
    }

    #[test]
    fn a_path_whose_directory_cannot_be_made_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        assert!(write_atomic(&file.join("below"), b"y").is_err());
        assert_eq!(names(dir.path()), ["a-file"]);
    }
}
