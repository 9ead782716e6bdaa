//! A [`Forge`] wrapper that fails the k-th write, to simulate a crash after any side effect.
//!
//! Resume tests sweep k over every write of a run: with [`FaultMode::Before`] the k-th write
//! never happens (the process died just before it), with [`FaultMode::After`] it happens but
//! the caller sees an error (the process died right after it, or the response was lost),
//! which is the case that creates duplicate drafts on real forges.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::ForgeError;
use super::{
    AssetInfo, CommentInfo, CommitInfo, FileChanges, Forge, ForgeResult, PullInfo, ReleaseInfo,
    RepoRef,
};

/// When the injected failure strikes relative to the write it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultMode {
    /// The k-th write is not performed.
    Before,
    /// The k-th write is performed, then reported as failed.
    After,
}

/// Fails the k-th write (1-based) and every write after it, like a dead process would.
#[derive(Debug)]
pub struct Faulty<F: Forge> {
    inner: F,
    fail_at: u64,
    mode: FaultMode,
    writes: AtomicU64,
    log: Mutex<Vec<&'static str>>,
}

impl<F: Forge> Faulty<F> {
    /// Fail the `fail_at`-th write (1-based; 0 never fails) and all later ones.
    pub fn new(inner: F, fail_at: u64, mode: FaultMode) -> Self {
        Faulty {
            inner,
            fail_at,
            mode,
            writes: AtomicU64::new(0),
            log: Mutex::new(Vec::new()),
        }
    }

    /// The wrapped forge.
    pub fn inner(&self) -> &F {
        &self.inner
    }

    /// Writes attempted so far (including the failed ones).
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    /// Whether the fault has struck.
    pub fn tripped(&self) -> bool {
        self.fail_at != 0 && self.writes() >= self.fail_at
    }

    /// Names of the writes that actually reached the inner forge, in order.
    pub fn performed(&self) -> Vec<&'static str> {
        self.log.lock().expect("log lock").clone()
    }

    fn fault(method: &'static str) -> ForgeError {
        ForgeError::Transient {
            what: method.to_string(),
            reason: "injected failure".into(),
        }
    }

    /// Run one write through the fault schedule.
    fn write<T>(
        &self,
        method: &'static str,
        call: impl FnOnce() -> ForgeResult<T>,
    ) -> ForgeResult<T> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        let strike = self.fail_at != 0 && n >= self.fail_at;
        if strike && (n > self.fail_at || self.mode == FaultMode::Before) {
            return Err(Self::fault(method));
        }
        let out = call();
        self.log.lock().expect("log lock").push(method);
        if strike {
            return Err(Self::fault(method));
        }
        out
    }
}

impl<F: Forge> Forge for Faulty<F> {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn seed_preview(&self, repo: &RepoRef) -> ForgeResult<Option<crate::model::FileTree>> {
        self.inner.seed_preview(repo)
    }

    fn ensure_repo(&self, repo: &RepoRef, default_branch: &str) -> ForgeResult<()> {
        self.inner.ensure_repo(repo, default_branch)
    }

    fn branch_head(&self, repo: &RepoRef, branch: &str) -> ForgeResult<Option<String>> {
        self.inner.branch_head(repo, branch)
    }

    fn tag_target(&self, repo: &RepoRef, tag: &str) -> ForgeResult<Option<String>> {
        self.inner.tag_target(repo, tag)
    }

    fn list_files(&self, repo: &RepoRef, commit: &str) -> ForgeResult<Vec<String>> {
        self.inner.list_files(repo, commit)
    }

    fn read_file(&self, repo: &RepoRef, commit: &str, path: &str) -> ForgeResult<Option<Vec<u8>>> {
        self.inner.read_file(repo, commit, path)
    }

    fn commit(
        &self,
        repo: &RepoRef,
        branch: &str,
        parent: &str,
        expected_head: Option<&str>,
        changes: &FileChanges,
        message: &str,
    ) -> ForgeResult<String> {
        self.write("commit", || {
            self.inner
                .commit(repo, branch, parent, expected_head, changes, message)
        })
    }

    fn force_branch(&self, repo: &RepoRef, branch: &str, commit: &str) -> ForgeResult<()> {
        self.write("force_branch", || {
            self.inner.force_branch(repo, branch, commit)
        })
    }

    fn commits_between(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> ForgeResult<Vec<CommitInfo>> {
        self.inner.commits_between(repo, base, head)
    }

    fn create_tag(
        &self,
        repo: &RepoRef,
        tag: &str,
        commit: &str,
        message: &str,
    ) -> ForgeResult<()> {
        self.write("create_tag", || {
            self.inner.create_tag(repo, tag, commit, message)
        })
    }

    fn list_releases(&self, repo: &RepoRef) -> ForgeResult<Vec<ReleaseInfo>> {
        self.inner.list_releases(repo)
    }

    fn create_draft_release(
        &self,
        repo: &RepoRef,
        tag: &str,
        name: &str,
        body: &str,
    ) -> ForgeResult<ReleaseInfo> {
        self.write("create_draft_release", || {
            self.inner.create_draft_release(repo, tag, name, body)
        })
    }

    fn upload_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        name: &str,
        bytes: &[u8],
    ) -> ForgeResult<AssetInfo> {
        self.write("upload_asset", || {
            self.inner.upload_asset(repo, release_id, name, bytes)
        })
    }

    fn download_asset(
        &self,
        repo: &RepoRef,
        release_id: u64,
        asset: &AssetInfo,
    ) -> ForgeResult<Vec<u8>> {
        self.inner.download_asset(repo, release_id, asset)
    }

    fn delete_asset(&self, repo: &RepoRef, release_id: u64, asset_id: u64) -> ForgeResult<()> {
        self.write("delete_asset", || {
            self.inner.delete_asset(repo, release_id, asset_id)
        })
    }

    fn publish_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<ReleaseInfo> {
        self.write("publish_release", || {
            self.inner.publish_release(repo, release_id)
        })
    }

    fn delete_release(&self, repo: &RepoRef, release_id: u64) -> ForgeResult<()> {
        self.write("delete_release", || {
            self.inner.delete_release(repo, release_id)
        })
    }

    fn find_pulls(&self, repo: &RepoRef, head: &str) -> ForgeResult<Vec<PullInfo>> {
        self.inner.find_pulls(repo, head)
    }

    fn open_pull(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> ForgeResult<PullInfo> {
        self.write("open_pull", || {
            self.inner.open_pull(repo, head, base, title, body)
        })
    }

    fn update_pull(&self, repo: &RepoRef, number: u64, title: &str, body: &str) -> ForgeResult<()> {
        self.write("update_pull", || {
            self.inner.update_pull(repo, number, title, body)
        })
    }

    fn close_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<()> {
        self.write("close_pull", || self.inner.close_pull(repo, number))
    }

    fn list_comments(&self, repo: &RepoRef, number: u64) -> ForgeResult<Vec<CommentInfo>> {
        self.inner.list_comments(repo, number)
    }

    fn create_comment(&self, repo: &RepoRef, number: u64, body: &str) -> ForgeResult<CommentInfo> {
        self.write("create_comment", || {
            self.inner.create_comment(repo, number, body)
        })
    }

    fn update_comment(&self, repo: &RepoRef, comment_id: u64, body: &str) -> ForgeResult<()> {
        self.write("update_comment", || {
            self.inner.update_comment(repo, comment_id, body)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forge::counting::Counting;
    use crate::forge::local::LocalForge;

    #[test]
    fn fails_the_kth_write_before_or_after_performing_it() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = RepoRef::parse("o/r").unwrap();
        for (mode, performed) in [(FaultMode::Before, 1), (FaultMode::After, 2)] {
            let dir = tmp.path().join(format!("{mode:?}"));
            let f = Faulty::new(Counting::new(LocalForge::new(&dir, "b", "b@x")), 2, mode);
            let d = f.create_draft_release(&repo, "t", "t", "").unwrap();
            assert!(f.upload_asset(&repo, d.id, "a", b"1").is_err());
            assert!(
                f.upload_asset(&repo, d.id, "b", b"2").is_err(),
                "stays dead"
            );
            assert!(f.tripped());
            assert_eq!(f.performed().len(), performed);
            assert_eq!(f.inner().writes(), performed as u64);
            // Reads still work: the next run observes what really happened.
            let rel = &f.list_releases(&repo).unwrap()[0];
            assert_eq!(rel.assets.len(), performed - 1);
            assert_eq!(f.inner().reads(), 1);
            assert_eq!(
                f.inner()
                    .by_method()
                    .get("upload_asset")
                    .copied()
                    .unwrap_or(0),
                performed as u64 - 1
            );
        }
    }
}
