//! GitHub's definite answers mapped to the errors the [`Forge`](crate::Forge) trait
//! promises. One table, so "422 already_exists" means [`ForgeError::AlreadyExists`] for refs,
//! releases, assets and pull requests alike.

use http::StatusCode;

use super::GithubForge;
use super::transport::Resp;
use crate::ForgeError;

impl GithubForge {
    /// Map a definite refusal to the error the trait promises. Messages are scrubbed of the
    /// token whatever GitHub echoed back.
    pub(super) fn refusal(&self, what: &str, r: &Resp) -> ForgeError {
        let (msg, codes) = r.message();
        let msg = self.t.scrub(msg);
        let what = what.to_string();
        let all = format!("{msg} {}", codes.join(" ")).to_ascii_lowercase();
        match r.status {
            s if s.is_redirection() => ForgeError::Moved {
                what,
                to: self.t.scrub(
                    crate::net::header(&r.headers, http::header::LOCATION)
                        .unwrap_or("no Location given"),
                ),
            },
            // Not the token's fault: say what is in the way and what to do about it (issue 12:
            // never "authentication failed" for an archived repository or a protected branch).
            StatusCode::FORBIDDEN if all.contains("archived") => ForgeError::Rejected {
                what,
                reason: format!(
                    "the repository is archived, so GitHub refuses every write (GitHub: {msg}); \
                     unarchive it (Settings → General → Danger Zone), or remove it from \
                     stackbot.yaml"
                ),
            },
            // Checked before the other protections: "Protected branch update failed" is how
            // this refusal starts too, but here exempting the bot is not the only way out.
            StatusCode::FORBIDDEN
            | StatusCode::UNPROCESSABLE_ENTITY
            | StatusCode::CONFLICT
            | StatusCode::METHOD_NOT_ALLOWED
                if is_signature_requirement(&all) =>
            {
                let msg = msg.trim().replace("\n\n", ": ").replace('\n', " ");
                ForgeError::Rejected {
                    reason: format!(
                        "the branch requires signed commits, and GitHub signs the bot's commits \
                         only when it authenticates as a GitHub App (GitHub: {msg}); \
                         {}",
                        if self.commits_signed_by_github() {
                            "the commits refused were not made by the bot: remove them from the \
                             branch, or lift the rule"
                        } else {
                            "authenticate stackbot as a GitHub App (`forge.github.app`, see \
                             docs/github-setup.md), or lift the \"Require signed commits\" \
                             rule for this branch"
                        }
                    ),
                    what,
                }
            }
            StatusCode::FORBIDDEN | StatusCode::UNPROCESSABLE_ENTITY | StatusCode::CONFLICT
                if is_protection(&all) =>
            {
                let msg = msg.trim().replace("\n\n", ": ").replace('\n', " ");
                ForgeError::Rejected {
                    reason: if what.contains("stackbot/") {
                        format!(
                            "the branch is protected (GitHub: {msg}); the bot only writes its own \
                             `stackbot/…` branches and rebuilds them when their content changes: \
                             exempt `stackbot/*` from the branch protection rule or ruleset, or \
                             let the bot's account or app bypass it"
                        )
                    } else {
                        format!(
                            "the branch is protected (GitHub: {msg}); let the bot's account or app \
                             bypass the rule, or use `forge.mode: pull-request` so releases go \
                             through a pull request"
                        )
                    },
                    what,
                }
            }
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ForgeError::Unauthorized {
                what: if msg.is_empty() {
                    what
                } else {
                    format!("{what} (GitHub: {msg})")
                },
                token_env: self.token_env.clone(),
            },
            StatusCode::NOT_FOUND => ForgeError::NotFound { what },
            StatusCode::UNPROCESSABLE_ENTITY if all.contains("fast forward") => {
                ForgeError::Conflict { what }
            }
            StatusCode::UNPROCESSABLE_ENTITY
                if all.contains("already_exists") || all.contains("already exists") =>
            {
                ForgeError::AlreadyExists { what }
            }
            s => ForgeError::Rejected {
                what,
                reason: self
                    .t
                    .scrub(format!("GitHub answered {s}: {msg} {}", codes.join("; "))),
            },
        }
    }
}

/// GitHub's refusal of commits without a verified signature on a branch that requires signed
/// commits (a classic rule's "Require signed commits", or a ruleset's): "Commits must have
/// verified signatures."
fn is_signature_requirement(lowercase_message: &str) -> bool {
    lowercase_message.contains("verified signature")
        || lowercase_message.contains("requires signed commits")
}

/// GitHub's ways of refusing a write to a protected branch: a classic protection rule
/// ("Protected branch update failed for refs/heads/…", "Cannot force-push to this protected
/// branch") or a repository ruleset ("Repository rule violations found", "Cannot update this
/// protected ref", "Cannot force-push to this branch").
fn is_protection(lowercase_message: &str) -> bool {
    [
        "protected branch",
        "must be made through a pull request",
        "required status check",
        "protected ref",
        "rule violations",
        "cannot force-push",
    ]
    .iter()
    .any(|m| lowercase_message.contains(m))
}
