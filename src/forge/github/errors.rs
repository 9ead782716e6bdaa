//! GitHub's definite answers mapped to the errors the [`Forge`](crate::forge::Forge) trait
//! promises. One table, so "422 already_exists" means [`ForgeError::AlreadyExists`] for refs,
//! releases, assets and pull requests alike.

use http::StatusCode;

use super::GithubForge;
use super::transport::Resp;
use crate::forge::ForgeError;

impl GithubForge {
    /// Map a definite refusal to the error the trait promises. Messages are scrubbed of the
    /// token whatever GitHub echoed back.
    pub(super) fn refusal(&self, what: &str, r: &Resp) -> ForgeError {
        let (msg, codes) = r.message();
        let msg = self.t.scrub(msg);
        let what = what.to_string();
        let all = format!("{msg} {}", codes.join(" ")).to_ascii_lowercase();
        // Refusals that are neither the token's fault nor transient: say what the repository
        // or branch is, and what to change (issue 12: not "authentication failed").
        let read_only = all.contains("archived");
        let protected = all.contains("protected branch")
            || all.contains("must be made through a pull request")
            || all.contains("required status check");
        match r.status {
            StatusCode::FORBIDDEN | StatusCode::UNPROCESSABLE_ENTITY | StatusCode::CONFLICT
                if read_only || protected =>
            {
                ForgeError::Rejected {
                    what,
                    reason: if read_only {
                        format!(
                            "the repository is archived, so it is read-only (GitHub: {msg}); unarchive it in its settings, or point the configuration at the active repository"
                        )
                    } else {
                        format!(
                            "the branch is protected (GitHub: {msg}); let the bot push to it, or use `forge.mode: pull-request`"
                        )
                    },
                }
            }
            s if s.is_redirection() => ForgeError::Moved {
                what,
                to: self.t.scrub(
                    r.headers
                        .get(http::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("no Location given")
                        .to_string(),
                ),
            },
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
