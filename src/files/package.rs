//! Stacks and releases on disk: a stack directory read into a tree, with every check that
//! protects the release from what happens to lie on disk (csctl follows symlinks and would
//! happily package `/etc/passwd` through one; we refuse), and the flat release directory
//! csctl would write, replaced atomically. Packaging itself is core's
//! ([`stackbot_core::package::package`]), a pure function of the tree.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use stackbot_core::model::FileTree;
use stackbot_core::package::tree::check_rel_path;
use stackbot_core::package::{PackageError, Release};

use super::tree::{self, Refuse};

/// Read every regular file under `dir` (recursively) into a tree keyed by its `/`-separated
/// relative path. Directories are implied by their files, exactly as csctl's dirhash sees
/// them. Symlinks, sockets, devices, FIFOs, non-UTF-8 names and names containing `\n` are
/// refused with an error that names the offending path.
pub fn read_stack_dir(dir: &Path) -> Result<FileTree, PackageError> {
    let meta = fs::symlink_metadata(dir).map_err(|e| PackageError::io(dir, e))?;
    if !meta.is_dir() {
        return Err(PackageError::invalid(
            dir.display().to_string(),
            "is not a directory: pass the stack directory (the one holding csctl.yaml)",
        ));
    }
    tree::walk(dir)
}

impl Refuse for PackageError {
    fn io(path: &Path, source: io::Error) -> Self {
        PackageError::io(path, source)
    }
    fn not_utf8(path: PathBuf) -> Self {
        PackageError::invalid(
            path.display().to_string(),
            "file name is not valid UTF-8: rename it",
        )
    }
    fn symlink(_path: PathBuf, rel: String) -> Self {
        PackageError::invalid(
            rel,
            "is a symlink: releases must be self-contained, replace it with the file it points to",
        )
    }
    fn special(_path: PathBuf, rel: String) -> Self {
        PackageError::invalid(
            rel,
            "is not a regular file or directory (socket, device or FIFO): remove it",
        )
    }
    /// A name csctl's dirhash would misread (a newline, a path escaping the stack) is refused
    /// before its entry is read.
    fn check(rel: &str) -> Result<(), Self> {
        check_rel_path(rel)
    }
}

/// Write `<out>/<release-name>/` atomically, as a rendered stack is written
/// ([`super::render::replace_dir`]: a staging sibling renamed into place only when complete,
/// leftovers of an interrupted run removed first). An existing release dir with identical
/// content is left untouched (re-running is a no-op); one with different content is replaced.
pub fn write_release(release: &Release, out: &Path) -> io::Result<PathBuf> {
    let target = out.join(release.name.to_string());
    if !(target.is_dir() && same_content(&target, &release.files)?) {
        super::render::replace_dir(&target, &release.files)?;
    }
    Ok(target)
}

fn same_content(dir: &Path, files: &FileTree) -> io::Result<bool> {
    let mut names = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        if !e.file_type()?.is_file() {
            return Ok(false);
        }
        names.push(e.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    if !names.iter().eq(files.keys()) {
        return Ok(false);
    }
    for (n, b) in files {
        if fs::read(dir.join(n))? != *b {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stackbot_core::package::{VersionSelection, package};

    #[test]
    fn write_release_is_atomic_and_idempotent() {
        let stack = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/cluster-stacks/openstack/scs2/1-34"
        );
        let tree = read_stack_dir(Path::new(stack)).unwrap();
        let r = package(&tree, &VersionSelection::Hash).unwrap();
        let d = tempfile::tempdir().unwrap();
        let p = write_release(&r, d.path()).unwrap();
        assert_eq!(p, d.path().join(r.name.to_string()));
        assert_eq!(
            fs::read(p.join("metadata.yaml")).unwrap(),
            r.files["metadata.yaml"]
        );
        write_release(&r, d.path()).unwrap();
        let entries: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(entries.len(), 1, "no temp dirs left behind");
    }

    #[test]
    fn reads_files_recursively_with_slash_paths() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("a/b")).unwrap();
        fs::write(d.path().join("a/b/c.yaml"), "x").unwrap();
        fs::write(d.path().join("top"), "y").unwrap();
        fs::create_dir(d.path().join("empty")).unwrap();
        let t = read_stack_dir(d.path()).unwrap();
        assert_eq!(t.keys().collect::<Vec<_>>(), ["a/b/c.yaml", "top"]);
        assert_eq!(t["top"], b"y");
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinks_naming_the_path() {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir(d.path().join("sub")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", d.path().join("sub/link")).unwrap();
        let err = read_stack_dir(d.path()).unwrap_err().to_string();
        assert!(err.contains("sub/link") && err.contains("symlink"), "{err}");
    }
}
