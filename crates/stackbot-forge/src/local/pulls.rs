//! Pull requests of the local forge: one JSON file per pull request, numbered from the
//! forge-wide id counter. One open pull request per head and base, as on GitHub; auto-merge is
//! recorded here and honoured by [`LocalForge::checks_passed`].

use std::path::PathBuf;

use super::LocalForge;
use super::files::{numbered_records, read_record, write_record};
use crate::{AutoMerge, Forge, ForgeError, ForgeResult, PullInfo, PullState, RepoRef};

impl LocalForge {
    pub(super) fn pulls_dir(&self, repo: &RepoRef) -> PathBuf {
        self.root.join("pulls").join(&repo.owner).join(&repo.name)
    }

    pub(super) fn pull_path(&self, repo: &RepoRef, number: u64) -> PathBuf {
        self.pulls_dir(repo).join(format!("{number}.json"))
    }

    pub(super) fn read_pull(&self, repo: &RepoRef, number: u64) -> ForgeResult<PullInfo> {
        read_record(&self.pull_path(repo, number), || {
            format!("pull request #{number} of {repo}")
        })
    }

    pub(super) fn write_pull(&self, repo: &RepoRef, p: &PullInfo) -> ForgeResult<()> {
        write_record(&self.pull_path(repo, p.number), p)
    }

    pub(super) fn all_pulls(&self, repo: &RepoRef) -> ForgeResult<Vec<PullInfo>> {
        let mut out = numbered_records(&self.pulls_dir(repo), ".json")?
            .into_iter()
            .map(|n| self.read_pull(repo, n))
            .collect::<ForgeResult<Vec<_>>>()?;
        out.sort_by_key(|p| std::cmp::Reverse(p.number));
        Ok(out)
    }

    pub(super) fn find_pulls_impl(&self, repo: &RepoRef, head: &str) -> ForgeResult<Vec<PullInfo>> {
        Ok(self
            .all_pulls(repo)?
            .into_iter()
            .filter(|p| p.head == head)
            .take(crate::PULLS_WINDOW)
            .collect())
    }

    pub(super) fn open_pull_impl(
        &self,
        repo: &RepoRef,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> ForgeResult<PullInfo> {
        let _g = self.repo_lock(repo)?;
        let what = format!("pull request {head} → {base} in {repo}");
        if self
            .all_pulls(repo)?
            .iter()
            .any(|p| p.head == head && p.base == base && p.state == PullState::Open)
        {
            return Err(ForgeError::AlreadyExists { what });
        }
        if self.branch_head(repo, head)?.is_none() {
            return Err(ForgeError::Rejected {
                what,
                reason: format!("branch {head} does not exist"),
            });
        }
        let number = self.next_id()?;
        let p = PullInfo {
            number,
            head: head.into(),
            base: base.into(),
            title: title.into(),
            body: body.into(),
            state: PullState::Open,
            html_url: format!("file://{}", self.pull_path(repo, number).display()),
            created_at: Some(self.clock.now()),
            merged_at: None,
            labels: Vec::new(),
            auto_merge: false,
        };
        self.write_pull(repo, &p)?;
        Ok(p)
    }

    pub(super) fn update_pull_impl(
        &self,
        repo: &RepoRef,
        number: u64,
        title: &str,
        body: &str,
    ) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut p = self.read_pull(repo, number)?;
        p.title = title.into();
        p.body = body.into();
        self.write_pull(repo, &p)
    }

    pub(super) fn add_labels_impl(
        &self,
        repo: &RepoRef,
        number: u64,
        labels: &[String],
    ) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut p = self.read_pull(repo, number)?;
        let before = p.labels.len();
        for l in labels {
            if !p.labels.iter().any(|x| x.eq_ignore_ascii_case(l)) {
                p.labels.push(l.clone());
            }
        }
        if p.labels.len() == before {
            return Ok(());
        }
        self.write_pull(repo, &p)
    }

    /// Recorded in the pull request (`auto_merge: true`); `stackbot forge checks-pass` plays the
    /// checks passing, and merges it.
    pub(super) fn enable_auto_merge_impl(
        &self,
        repo: &RepoRef,
        number: u64,
    ) -> ForgeResult<AutoMerge> {
        let _g = self.repo_lock(repo)?;
        let mut p = self.read_pull(repo, number)?;
        if p.state != PullState::Open {
            return Err(ForgeError::Rejected {
                what: format!("auto-merge of pull request #{number} of {repo}"),
                reason: "the pull request is not open".into(),
            });
        }
        if !p.auto_merge {
            p.auto_merge = true;
            self.write_pull(repo, &p)?;
        }
        Ok(AutoMerge::Enabled)
    }

    pub(super) fn close_pull_impl(&self, repo: &RepoRef, number: u64) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut p = self.read_pull(repo, number)?;
        if p.state == PullState::Open {
            p.state = PullState::Closed;
            self.write_pull(repo, &p)?;
        }
        Ok(())
    }
}
