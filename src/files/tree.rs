//! The one walk of a directory into a [`FileTree`]: template trees, rendered stacks and stack
//! directories are read by it alike, so what "a tree on disk" means (regular files only,
//! sorted, `/`-separated UTF-8 paths, no symlink followed) is decided once. Each caller words
//! the refusals in its own error ([`Refuse`]), so a template author and a `stackbot package`
//! user each read the hint meant for them.

use std::io;
use std::path::{Path, PathBuf};

use stackbot_core::model::FileTree;

/// How a caller words what the walk refuses. `path` is the entry on disk, `rel` its path in
/// the tree.
pub trait Refuse: Sized {
    fn io(path: &Path, source: io::Error) -> Self;
    fn not_utf8(path: PathBuf) -> Self;
    fn symlink(path: PathBuf, rel: String) -> Self;
    /// A socket, device or FIFO.
    fn special(path: PathBuf, rel: String) -> Self;
    /// A further check of every relative path, before its entry is read.
    fn check(_rel: &str) -> Result<(), Self> {
        Ok(())
    }
}

/// Read every regular file below the directory `dir` (its type already checked by the
/// caller), in name order.
pub fn walk<E: Refuse>(dir: &Path) -> Result<FileTree, E> {
    let mut tree = FileTree::new();
    walk_into(dir, "", &mut tree)?;
    Ok(tree)
}

fn walk_into<E: Refuse>(abs: &Path, prefix: &str, tree: &mut FileTree) -> Result<(), E> {
    let mut entries: Vec<_> = std::fs::read_dir(abs)
        .and_then(|entries| entries.collect::<Result<_, _>>())
        .map_err(|e| E::io(abs, e))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return Err(E::not_utf8(path));
        };
        let rel = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}/{name}")
        };
        E::check(&rel)?;
        let kind = entry.file_type().map_err(|e| E::io(&path, e))?;
        if kind.is_dir() {
            walk_into(&path, &rel, tree)?;
        } else if kind.is_file() {
            let bytes = std::fs::read(&path).map_err(|e| E::io(&path, e))?;
            tree.insert(rel, bytes);
        } else if kind.is_symlink() {
            return Err(E::symlink(path, rel));
        } else {
            return Err(E::special(path, rel));
        }
    }
    Ok(())
}
