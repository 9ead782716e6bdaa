//! Repositories of the local forge: where the bare repositories live, opening them, and
//! creating a missing one the way GitHub's "initialize with a README" does (from a seed
//! folder when configured), so that the first release always has a parent commit.

use std::fs;
use std::path::{Path, PathBuf};

use git2::Repository;

use super::LocalForge;
use super::commits::build_tree;
use super::files::{fs_err, git_err};
use crate::model::FileTree;
use crate::{FileChanges, ForgeError, ForgeResult, RepoRef};

impl LocalForge {
    /// The bare repository's path.
    pub fn repo_path(&self, repo: &RepoRef) -> PathBuf {
        self.root
            .join("repos")
            .join(&repo.owner)
            .join(format!("{}.git", repo.name))
    }

    pub(super) fn open(&self, repo: &RepoRef) -> ForgeResult<Repository> {
        let p = self.repo_path(repo);
        if !p.exists() {
            return Err(ForgeError::NotFound {
                what: format!("repository {repo}"),
            });
        }
        Repository::open_bare(&p).map_err(|e| git_err(format!("repository {repo}"), e))
    }

    pub(super) fn ensure_repo_impl(&self, repo: &RepoRef, default_branch: &str) -> ForgeResult<()> {
        let path = self.repo_path(repo);
        if path.exists() {
            return Ok(());
        }
        if !self.may_create(repo) {
            return Err(ForgeError::NotFound {
                what: format!("repository {repo}"),
            });
        }
        let _g = self.repo_lock(repo)?;
        if path.exists() {
            return Ok(());
        }
        let what = format!("create repository {repo}");
        let parent = path.parent().expect("repo path has a parent");
        fs::create_dir_all(parent).map_err(|e| fs_err(&what, e))?;
        // Build under a temporary name and rename: a crash never leaves a half-made repository.
        let tmp = parent.join(format!(".{}.tmp.{}", repo.name, std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        {
            let r = Repository::init_bare(&tmp).map_err(|e| git_err(&what, e))?;
            r.set_head(&format!("refs/heads/{default_branch}"))
                .map_err(|e| git_err(&what, e))?;
            // Like a GitHub repository created with "initialize with a README": the default
            // branch always exists, so the first release has a parent to commit on.
            let (files, label) = match self.seeds.get(repo) {
                Some(dir) => (seed_files(dir)?, format!("seed from {}", dir.display())),
                None => (FileTree::new(), "initial commit".to_string()),
            };
            self.initial_commit(&r, files, default_branch, &label)?;
        }
        fs::rename(&tmp, &path).map_err(|e| fs_err(&what, e))
    }

    pub(super) fn seed_preview_impl(&self, repo: &RepoRef) -> ForgeResult<Option<FileTree>> {
        if self.repo_path(repo).exists() || !self.may_create(repo) {
            return Ok(None);
        }
        match self.seeds.get(repo) {
            Some(dir) => seed_files(dir).map(Some),
            None => Ok(Some(FileTree::new())),
        }
    }

    /// The first commit of a new repository on `branch`: the seed's `files`, or none.
    fn initial_commit(
        &self,
        r: &Repository,
        files: FileTree,
        branch: &str,
        what: &str,
    ) -> ForgeResult<()> {
        let changes: FileChanges = files.into_iter().map(|(k, v)| (k, Some(v))).collect();
        let tree = build_tree(r, None, &changes)
            .and_then(|t| r.find_tree(t))
            .map_err(|e| git_err(what, e))?;
        let sig = self.signature()?;
        r.commit(
            Some(&format!("refs/heads/{branch}")),
            &sig,
            &sig,
            "Initial commit",
            &tree,
            &[],
        )
        .map_err(|e| git_err(what, e))?;
        Ok(())
    }
}

/// The files of the seed folder `dir`, by path relative to it.
fn seed_files(dir: &Path) -> ForgeResult<FileTree> {
    let what = format!("seed from {}", dir.display());
    let mut files = Vec::new();
    collect_files(dir, dir, &mut files).map_err(|e| fs_err(&what, e))?;
    let mut tree = FileTree::new();
    for (rel, abs) in files {
        let bytes = fs::read(&abs).map_err(|e| fs_err(abs.display().to_string(), e))?;
        tree.insert(rel, bytes);
    }
    Ok(tree)
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        if e.file_type()?.is_dir() {
            collect_files(root, &p, out)?;
        } else {
            let rel = p
                .strip_prefix(root)
                .expect("under root")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, p));
        }
    }
    Ok(())
}
