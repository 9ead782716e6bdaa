//! Issues on the local forge: one JSON file per issue, numbered from the forge-wide id counter
//! (like GitHub, issues and pull requests never share a number), and its body beside it as
//! `<number>.md`: the file a person edits (ticking an approval on the dashboard, as in the
//! web UI), which wins over the body in the JSON record.

use std::fs;
use std::path::PathBuf;

use super::LocalForge;
use super::files::{fs_err, numbered_records, read_record, write_atomic, write_record};
use crate::{ForgeResult, IssueInfo, IssueState, RepoRef};

impl LocalForge {
    pub(super) fn issues_dir(&self, repo: &RepoRef) -> PathBuf {
        self.root.join("issues").join(&repo.owner).join(&repo.name)
    }

    pub(super) fn list_issues_impl(
        &self,
        repo: &RepoRef,
        label: Option<&str>,
    ) -> ForgeResult<Vec<IssueInfo>> {
        Ok(self
            .all_issues(repo)?
            .into_iter()
            .filter(|i| label.is_none_or(|l| i.labels.iter().any(|x| x.eq_ignore_ascii_case(l))))
            .collect())
    }

    pub(super) fn create_issue_impl(
        &self,
        repo: &RepoRef,
        title: &str,
        body: &str,
        labels: &[String],
    ) -> ForgeResult<IssueInfo> {
        let _g = self.repo_lock(repo)?;
        let number = self.next_id()?;
        let issue = IssueInfo {
            number,
            title: title.into(),
            body: body.into(),
            state: IssueState::Open,
            labels: labels.to_vec(),
            html_url: format!("file://{}", self.issue_path(repo, number).display()),
        };
        self.write_issue(repo, &issue)?;
        Ok(issue)
    }

    pub(super) fn update_issue_impl(
        &self,
        repo: &RepoRef,
        number: u64,
        title: &str,
        body: &str,
    ) -> ForgeResult<()> {
        let _g = self.repo_lock(repo)?;
        let mut issue = self.read_issue(repo, number)?;
        issue.title = title.into();
        issue.body = body.into();
        self.write_issue(repo, &issue)
    }

    pub(super) fn issue_path(&self, repo: &RepoRef, number: u64) -> PathBuf {
        self.issues_dir(repo).join(format!("{number}.json"))
    }

    /// The editable body of issue `number`.
    pub fn issue_body_path(&self, repo: &RepoRef, number: u64) -> PathBuf {
        self.issues_dir(repo).join(format!("{number}.md"))
    }

    pub(super) fn read_issue(&self, repo: &RepoRef, number: u64) -> ForgeResult<IssueInfo> {
        let mut issue: IssueInfo = read_record(&self.issue_path(repo, number), || {
            format!("issue #{number} of {repo}")
        })?;
        let md = self.issue_body_path(repo, number);
        match fs::read_to_string(&md) {
            Ok(body) => issue.body = body,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(fs_err(md.display().to_string(), e)),
        }
        Ok(issue)
    }

    pub(super) fn write_issue(&self, repo: &RepoRef, issue: &IssueInfo) -> ForgeResult<()> {
        let md = self.issue_body_path(repo, issue.number);
        write_atomic(&md, issue.body.as_bytes())
            .map_err(|e| fs_err(md.display().to_string(), e))?;
        write_record(&self.issue_path(repo, issue.number), issue)
    }

    /// Every issue of `repo`, oldest first.
    pub(super) fn all_issues(&self, repo: &RepoRef) -> ForgeResult<Vec<IssueInfo>> {
        let mut out = numbered_records(&self.issues_dir(repo), ".json")?
            .into_iter()
            .map(|n| self.read_issue(repo, n))
            .collect::<ForgeResult<Vec<_>>>()?;
        out.sort_by_key(|i| i.number);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::local::LocalForge;
    use crate::{Forge, IssueState, RepoRef};

    #[test]
    fn issues_are_numbered_listed_by_label_and_edited_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let f = LocalForge::new(tmp.path().join("forge"), "bot", "bot@example.org");
        let repo = RepoRef::parse("scs/cluster-stacks").unwrap();
        assert!(f.list_issues(&repo, None).unwrap().is_empty());
        let a = f
            .create_issue(&repo, "Dashboard", "<!-- m -->\nbody", &["dash".into()])
            .unwrap();
        let b = f.create_issue(&repo, "Other", "x", &[]).unwrap();
        assert!(b.number > a.number);
        assert_eq!(a.state, IssueState::Open);
        let labelled = f.list_issues(&repo, Some("DASH")).unwrap();
        assert_eq!(labelled, vec![a.clone()], "labels match case-insensitively");
        assert_eq!(f.list_issues(&repo, None).unwrap().len(), 2);
        f.update_issue(&repo, a.number, "Dashboard", "new body")
            .unwrap();
        let again = LocalForge::new(tmp.path().join("forge"), "bot", "bot@example.org");
        let got = &again.list_issues(&repo, Some("dash")).unwrap()[0];
        assert_eq!((got.number, got.body.as_str()), (a.number, "new body"));
        assert_eq!(got.labels, vec!["dash".to_string()], "labels are kept");
        assert!(matches!(
            f.update_issue(&repo, 999, "t", "b").unwrap_err(),
            crate::ForgeError::NotFound { .. }
        ));
    }

    /// The dashboard's issues folder (or one issue's body) that the file system refuses is a
    /// refusal a person must fix ([`crate::ForgeError::Denied`], exit 2), never transient I/O
    /// trouble (exit 1, "re-running is safe"): the next hourly run would fail the same way.
    /// Root reads any folder, so where this test finds itself privileged it runs again as
    /// `nobody` (a copy of this test binary in the temporary folder, so that no folder of the
    /// checkout needs to be open to that user); it never passes without having been refused.
    #[test]
    fn an_issues_folder_the_file_system_refuses_is_denied_not_transient() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let f = LocalForge::new(tmp.path().join("forge"), "bot", "bot@example.org");
        let repo = RepoRef::parse("scs/cluster-stacks").unwrap();
        let issue = f.create_issue(&repo, "Dashboard", "body", &[]).unwrap();
        let mode = |p: &std::path::Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        let dir = f.issues_dir(&repo);
        mode(&dir, 0o000);
        let refused = std::fs::read_dir(&dir).is_err();
        if !refused {
            mode(&dir, 0o755);
            return again_as_nobody(
                "local::issues::tests::an_issues_folder_the_file_system_refuses_is_denied_not_transient",
            );
        }
        let denied = |e: crate::ForgeError| match e {
            crate::ForgeError::Denied { what, .. } => what,
            other => panic!("a refused folder must be Denied, got {other:?}"),
        };
        let what = denied(f.list_issues(&repo, None).unwrap_err());
        assert_eq!(
            what,
            dir.display().to_string(),
            "the error names the folder"
        );
        mode(&dir, 0o755);
        let body = f.issue_body_path(&repo, issue.number);
        mode(&body, 0o000);
        let what = denied(f.list_issues(&repo, None).unwrap_err());
        assert_eq!(
            what,
            body.display().to_string(),
            "the error names the body file"
        );
        mode(&body, 0o644);
        assert_eq!(f.list_issues(&repo, None).unwrap().len(), 1);
    }

    /// Run test `name` of this binary again as user and group 65534 (`nobody`), and require
    /// that it passed there. A privileged child (it would recurse) fails instead.
    fn again_as_nobody(name: &str) {
        use std::os::unix::fs::PermissionsExt;
        use std::os::unix::process::CommandExt;
        const CHILD: &str = "STACKBOT_TEST_UNPRIVILEGED";
        assert!(
            std::env::var_os(CHILD).is_none(),
            "running as user 65534 and still not refused: this machine cannot check that a \
             refused folder is reported as denied (run the tests as a user without \
             CAP_DAC_OVERRIDE)"
        );
        let copy = tempfile::Builder::new()
            .prefix("stackbot-forge-test")
            .tempdir()
            .unwrap();
        std::fs::set_permissions(copy.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let exe = copy.path().join("tests");
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = std::process::Command::new(&exe)
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env_clear()
            .env(CHILD, "1")
            .env("TMPDIR", std::env::temp_dir())
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {} as user 65534: {e}", exe.display()));
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && said.contains("1 passed"),
            "the test as user 65534 ({}): {said}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
