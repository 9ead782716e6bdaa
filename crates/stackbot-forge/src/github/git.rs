//! Reading git data: refs (branches, peeled tags), trees, files and blobs, and comparisons.

use base64::Engine as _;

use super::{GithubForge, enc, is_sha, str_of};
use crate::{CommitInfo, ForgeError, ForgeResult, RepoRef};

/// GitHub's media type for a blob's bytes as they are.
const RAW: &str = "application/vnd.github.raw+json";

impl GithubForge {
    pub(super) async fn branch_head_a(
        &self,
        repo: &RepoRef,
        branch: &str,
    ) -> ForgeResult<Option<String>> {
        let what = format!("branch `{branch}` of {repo}");
        let path = format!(
            "{}/git/ref/heads/{}",
            Self::repo_path(repo),
            enc(branch, true)
        );
        Ok(self
            .get_opt(&what, &path)
            .await?
            .and_then(|v| v["object"]["sha"].as_str().map(str::to_string)))
    }

    pub(super) async fn tag_target_a(
        &self,
        repo: &RepoRef,
        tag: &str,
    ) -> ForgeResult<Option<String>> {
        let what = format!("tag `{tag}` of {repo}");
        let path = format!("{}/git/ref/tags/{}", Self::repo_path(repo), enc(tag, true));
        let Some(v) = self.get_opt(&what, &path).await? else {
            return Ok(None);
        };
        let (mut kind, mut sha) = (str_of(&v["object"]["type"]), str_of(&v["object"]["sha"]));
        // Peel annotated tags (possibly nested) down to the commit.
        for _ in 0..8 {
            if kind != "tag" {
                break;
            }
            let path = format!("{}/git/tags/{sha}", Self::repo_path(repo));
            let t = self.get_json(&what, &path).await?;
            kind = str_of(&t["object"]["type"]);
            sha = str_of(&t["object"]["sha"]);
        }
        Ok(Some(sha))
    }

    /// Resolve a commit-ish (sha, branch or tag) to a commit sha.
    pub(super) async fn resolve_commit(&self, repo: &RepoRef, commit: &str) -> ForgeResult<String> {
        if is_sha(commit) {
            return Ok(commit.to_ascii_lowercase());
        }
        if let Some(c) = self.branch_head_a(repo, commit).await? {
            return Ok(c);
        }
        if let Some(c) = self.tag_target_a(repo, commit).await? {
            return Ok(c);
        }
        Err(ForgeError::NotFound {
            what: format!("commit `{commit}` in {repo}"),
        })
    }

    pub(super) async fn commit_tree(&self, repo: &RepoRef, commit: &str) -> ForgeResult<String> {
        let what = format!("commit {commit} of {repo}");
        let path = format!("{}/git/commits/{commit}", Self::repo_path(repo));
        Ok(str_of(&self.get_json(&what, &path).await?["tree"]["sha"]))
    }

    pub(super) async fn list_files_a(
        &self,
        repo: &RepoRef,
        commit: &str,
    ) -> ForgeResult<Vec<String>> {
        let commit = self.resolve_commit(repo, commit).await?;
        let tree = self.commit_tree(repo, &commit).await?;
        let what = format!("files of {commit} in {repo}");
        let path = format!("{}/git/trees/{tree}?recursive=1", Self::repo_path(repo));
        let v = self.get_json(&what, &path).await?;
        let mut files = Vec::new();
        if v["truncated"].as_bool().unwrap_or(false) {
            // Too big for one recursive answer: walk the tree level by level.
            let mut stack = vec![(String::new(), tree)];
            while let Some((prefix, sha)) = stack.pop() {
                let level = format!("{}/git/trees/{sha}", Self::repo_path(repo));
                let t = self.get_json(&what, &level).await?;
                for e in t["tree"].as_array().into_iter().flatten() {
                    let p = format!("{prefix}{}", str_of(&e["path"]));
                    match e["type"].as_str() {
                        Some("blob") => files.push(p),
                        Some("tree") => stack.push((format!("{p}/"), str_of(&e["sha"]))),
                        _ => {}
                    }
                }
            }
        } else {
            for e in v["tree"].as_array().into_iter().flatten() {
                if e["type"].as_str() == Some("blob") {
                    files.push(str_of(&e["path"]));
                }
            }
        }
        files.sort();
        Ok(files)
    }

    pub(super) async fn read_file_a(
        &self,
        repo: &RepoRef,
        commit: &str,
        path: &str,
    ) -> ForgeResult<Option<Vec<u8>>> {
        let what = format!("`{path}` at {commit} in {repo}");
        let url = format!(
            "{}/contents/{}?ref={}",
            Self::repo_path(repo),
            enc(path.trim_start_matches('/'), true),
            enc(commit, false)
        );
        let Some(v) = self.get_opt(&what, &url).await? else {
            return Ok(None);
        };
        if v["type"].as_str() != Some("file") {
            return Ok(None); // a directory (array), symlink or submodule is not a file
        }
        let size = v["size"].as_u64();
        let content = str_of(&v["content"]);
        if v["encoding"].as_str() == Some("base64") && (!content.is_empty() || size == Some(0)) {
            return decode_b64(&what, &content).map(Some);
        }
        // Over 1 MiB the contents API omits the content; the blobs API has it. Asked for raw
        // (no base64 answer to hold and decode, a third larger), and read no further than the
        // size just listed.
        let blob = format!("{}/git/blobs/{}", Self::repo_path(repo), str_of(&v["sha"]));
        let req = super::transport::Req {
            accept: RAW,
            length: size.map_or(
                super::wire::Length::AtMost(super::wire::API_ANSWER_CEILING),
                super::wire::Length::Listed,
            ),
            ..super::transport::Req::get(blob)
        };
        let got = self.read_ok(&what, &req).await;
        got.map(|r| Some(r.body))
            .map_err(|e| super::transport::relabel(&what, e))
    }

    pub(super) async fn commits_between_a(
        &self,
        repo: &RepoRef,
        base: &str,
        head: &str,
    ) -> ForgeResult<Vec<CommitInfo>> {
        let what = format!("commits {base}...{head} in {repo}");
        let path = format!(
            "{}/compare/{}...{}?per_page=100",
            Self::repo_path(repo),
            enc(base, false),
            enc(head, false)
        );
        let commits = self.get_all(&what, path, Some("commits")).await?;
        // Known once the first request of this run reached a repository (the installation
        // lookup names the App), so it is known here.
        let bot = self.app_bot_login();
        Ok(commits
            .iter()
            .map(|c| CommitInfo {
                sha: str_of(&c["sha"]),
                author_name: str_of(&c["commit"]["author"]["name"]),
                author_email: str_of(&c["commit"]["author"]["email"]),
                by_app: bot
                    .as_deref()
                    .is_some_and(|b| is_app_bot_email(b, &str_of(&c["commit"]["author"]["email"]))),
                message: str_of(&c["commit"]["message"]),
                parents: c["parents"]
                    .as_array()
                    .map(|ps| ps.iter().map(|p| str_of(&p["sha"])).collect())
                    .unwrap_or_default(),
            })
            .collect())
    }
}

/// Whether `email` is the no-reply address GitHub gives the bot account `login`
/// (`<slug>[bot]`) on the commits it signs for the App: `<user id>+<login>@users.noreply.
/// github.com`. Only GitHub hands out these addresses, and a `[bot]` login cannot be a
/// person's, so the suffix is proof enough without knowing the user id.
pub(super) fn is_app_bot_email(login: &str, email: &str) -> bool {
    let email = email.to_ascii_lowercase();
    let suffix = format!("+{}@users.noreply.github.com", login.to_ascii_lowercase());
    email
        .strip_suffix(&suffix)
        .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

fn decode_b64(what: &str, s: &str) -> ForgeResult<Vec<u8>> {
    let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(clean)
        .map_err(|e| ForgeError::Io {
            what: what.into(),
            reason: format!("GitHub sent invalid base64: {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::is_app_bot_email;

    #[test]
    fn an_app_s_bot_address_is_recognised_and_look_alikes_are_not() {
        let bot = "stackbot[bot]";
        assert!(is_app_bot_email(
            bot,
            "12345+stackbot[bot]@users.noreply.github.com"
        ));
        assert!(is_app_bot_email(
            bot,
            "12345+StackBot[bot]@Users.NoReply.GitHub.com"
        ));
        for other in [
            "stackbot[bot]@users.noreply.github.com",
            "+stackbot[bot]@users.noreply.github.com",
            "x1+stackbot[bot]@users.noreply.github.com",
            "12345+other[bot]@users.noreply.github.com",
            "12345+stackbot[bot]@example.com",
            "12345+stackbot@users.noreply.github.com",
        ] {
            assert!(!is_app_bot_email(bot, other), "{other}");
        }
    }
}
