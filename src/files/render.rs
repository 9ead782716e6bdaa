//! Template trees and rendered stacks on disk: read a tree (refusing what could pull in files
//! from elsewhere on the machine) and replace a stack directory atomically. Rendering itself is
//! core's ([`stackbot_core::render`]), a pure function of the trees read here.

use std::path::{Path, PathBuf};

use stackbot_core::model::FileTree;
use stackbot_core::render::{RenderError, TemplateTree};

use super::tree::{self, Refuse};

/// Read every regular file below `dir`. Symlinks and special files are refused so a template
/// tree can never pull in files from elsewhere on the machine.
pub fn load_templates(dir: &Path) -> Result<TemplateTree, RenderError> {
    if std::fs::symlink_metadata(dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Err(RenderError::Missing {
            root: dir.to_path_buf(),
        });
    }
    TemplateTree::new(dir, read_tree(dir)?)
}

/// Read a directory into a [`FileTree`] (also used to compare rendered output with what is
/// committed). A missing directory is an empty tree.
pub fn read_tree(dir: &Path) -> Result<FileTree, RenderError> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileTree::new()),
        Err(e) => {
            return Err(RenderError::Io {
                path: dir.to_path_buf(),
                source: e,
            });
        }
        Ok(m) if !m.is_dir() => return Err(unsupported(dir.to_path_buf(), "is not a directory")),
        Ok(_) => {}
    }
    tree::walk(dir)
}

impl Refuse for RenderError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        RenderError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
    fn not_utf8(path: PathBuf) -> Self {
        unsupported(path, "file name is not UTF-8")
    }
    fn symlink(path: PathBuf, _rel: String) -> Self {
        unsupported(path, "is a symlink")
    }
    fn special(path: PathBuf, _rel: String) -> Self {
        unsupported(path, "is not a regular file")
    }
}

fn unsupported(path: PathBuf, what: &str) -> RenderError {
    RenderError::Unsupported {
        path,
        what: what.into(),
    }
}

/// Make `dir` hold exactly `tree`: files are written into a fresh sibling directory which
/// then replaces `dir` by rename, so readers never see a half-written stack and stale files
/// disappear. Leftovers of an interrupted run (hidden `.<name>.stackbot-*` siblings) are
/// removed first, so re-running after a crash finishes the job.
pub fn replace_dir(dir: &Path, tree: &FileTree) -> std::io::Result<()> {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = dir
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{}: no directory name", dir.display())))?
        .to_string_lossy()
        .into_owned();
    std::fs::create_dir_all(parent)?;
    let prefix = format!(".{name}.stackbot-");
    for entry in std::fs::read_dir(parent)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_dir_all(entry.path())?;
        }
    }
    let staging = parent.join(format!("{prefix}new"));
    std::fs::create_dir_all(&staging)?;
    for (rel, bytes) in tree {
        if rel
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
        {
            return Err(std::io::Error::other(format!(
                "refusing to write path `{rel}`"
            )));
        }
        let path = staging.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p)?;
        }
        std::fs::write(&path, bytes)?;
    }
    if dir.exists() {
        let old = parent.join(format!("{prefix}old"));
        std::fs::rename(dir, &old)?;
        std::fs::rename(&staging, dir)?;
        std::fs::remove_dir_all(&old)?;
    } else {
        std::fs::rename(&staging, dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_dir_removes_stale_files_and_crash_leftovers() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out/1-34");
        std::fs::create_dir_all(dir.join("old")).unwrap();
        std::fs::write(dir.join("old/stale.yaml"), "x").unwrap();
        std::fs::create_dir_all(root.path().join("out/.1-34.stackbot-new/junk")).unwrap();
        let tree: FileTree = [("a/b.yaml".to_string(), b"new".to_vec())].into();
        replace_dir(&dir, &tree).unwrap();
        assert_eq!(read_tree(&dir).unwrap(), tree);
        let siblings: Vec<_> = std::fs::read_dir(root.path().join("out"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(siblings, ["1-34"]);
    }

    #[test]
    fn load_templates_reads_nested_files_and_refuses_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/c.tera"), "x").unwrap();
        std::fs::write(dir.path().join(".helmignore"), "y").unwrap();
        let t = load_templates(dir.path()).unwrap();
        assert_eq!(
            t.files.keys().collect::<Vec<_>>(),
            [".helmignore", "a/b/c.tera"]
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/passwd", dir.path().join("a/leak")).unwrap();
            let err = load_templates(dir.path()).unwrap_err();
            assert!(err.to_string().contains("symlink"), "{err}");
        }
    }
}
