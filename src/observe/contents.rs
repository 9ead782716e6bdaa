//! What a commit holds, as one run read it: a commit's file list and the files at it. Both
//! never change (a commit id names its content), so a run that read them once never reads them
//! again, whatever it wrote in between. Why: the tenant stage reads each tenant's base branch,
//! and the status at the end of a release run reads again the tenants the run changed (their
//! bot branches moved, their base usually did not): the same file list and files, read twice.
//! The branch heads are read again (they are not content), the content at an unchanged head is
//! not.

use crate::forge::{Forge, ForgeError, RepoRef};

/// A file at a commit: repository, commit, path.
type FileKey = (String, String, String);

/// The contents one run read, by repository and commit. Only answers are kept: a read that
/// failed is tried again when asked again.
#[derive(Debug, Default)]
pub struct Contents {
    lists: super::Memo<(String, String), Vec<String>>,
    files: super::Memo<FileKey, Option<Vec<u8>>>,
}

impl Contents {
    /// Every file path at `commit` ([`Forge::list_files`]), read the first time only.
    pub fn list_files(
        &self,
        forge: &dyn Forge,
        repo: &RepoRef,
        commit: &str,
    ) -> Result<Vec<String>, ForgeError> {
        let key = (repo.to_string(), commit.to_string());
        self.lists.get_or(key, || forge.list_files(repo, commit))
    }

    /// The file `path` at `commit` ([`Forge::read_file`]), read the first time only.
    pub fn read_file(
        &self,
        forge: &dyn Forge,
        repo: &RepoRef,
        commit: &str,
        path: &str,
    ) -> Result<Option<Vec<u8>>, ForgeError> {
        let key = (repo.to_string(), commit.to_string(), path.to_string());
        self.files
            .get_or(key, || forge.read_file(repo, commit, path))
    }
}
