//! The paths a stack tree may hold. Packaging is a pure function of a [`FileTree`]; the
//! binary reads a stack directory into one (`stackbot::package::read_stack_dir`) with these
//! checks, and trees built by other stages are checked here alike.

use super::PackageError;
use crate::FileTree;

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
    fn refuses_escaping_and_newline_paths() {
        for p in ["../x", "/etc/x", "a//b", "a/./b", "a\nb", "a/../b"] {
            assert!(check_rel_path(p).is_err(), "{p:?}");
        }
        assert!(check_rel_path("cluster-class/.helmignore").is_ok());
    }
}
