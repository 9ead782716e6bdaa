//! Reading a stack directory into memory.
//!
//! Packaging is a pure function of a [`FileTree`], so the only filesystem access happens
//! here, once, with every check that protects the release from what happens to lie on disk:
//! csctl follows symlinks and would happily package `/etc/passwd` through one; we refuse.

use std::fs;
use std::path::Path;

use super::PackageError;
use crate::FileTree;

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
    let mut tree = FileTree::new();
    walk(dir, "", &mut tree)?;
    Ok(tree)
}

fn walk(abs: &Path, rel: &str, tree: &mut FileTree) -> Result<(), PackageError> {
    let mut entries: Vec<_> = fs::read_dir(abs)
        .map_err(|e| PackageError::io(abs, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| PackageError::io(abs, e))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return Err(PackageError::invalid(
                path.display().to_string(),
                "file name is not valid UTF-8: rename it",
            ));
        };
        let rel_path = if rel.is_empty() {
            name.to_string()
        } else {
            format!("{rel}/{name}")
        };
        check_rel_path(&rel_path)?;
        let ft = entry.file_type().map_err(|e| PackageError::io(&path, e))?;
        if ft.is_symlink() {
            return Err(PackageError::invalid(
                rel_path,
                "is a symlink: releases must be self-contained, replace it with the file it points to",
            ));
        } else if ft.is_dir() {
            walk(&path, &rel_path, tree)?;
        } else if ft.is_file() {
            let bytes = fs::read(&path).map_err(|e| PackageError::io(&path, e))?;
            tree.insert(rel_path, bytes);
        } else {
            return Err(PackageError::invalid(
                rel_path,
                "is not a regular file or directory (socket, device or FIFO): remove it",
            ));
        }
    }
    Ok(())
}

/// A tree path must stay inside the stack directory and be representable in csctl's dirhash
/// and in a tar header: relative, `/`-separated, no empty, `.` or `..` components, no `\n`.
pub fn check_rel_path(p: &str) -> Result<(), PackageError> {
    let bad = |why: &str| Err(PackageError::invalid(p.to_string(), why));
    if p.contains('\n') {
        return bad("file name contains a newline, which csctl's dirhash rejects: rename it");
    }
    if p.contains('\0') || p.contains('\\') {
        return bad("file name contains a NUL byte or a backslash: rename it");
    }
    if p.starts_with('/') || p.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return bad("path escapes the stack directory or is not a clean relative path");
    }
    Ok(())
}

/// Check every path of an in-memory tree (trees built by other stages, not read from disk).
pub fn check_tree(tree: &FileTree) -> Result<(), PackageError> {
    tree.keys().try_for_each(|p| check_rel_path(p))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn refuses_escaping_and_newline_paths() {
        for p in ["../x", "/etc/x", "a//b", "a/./b", "a\nb", "a/../b"] {
            assert!(check_rel_path(p).is_err(), "{p:?}");
        }
        assert!(check_rel_path("cluster-class/.helmignore").is_ok());
    }
}
