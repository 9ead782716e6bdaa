//! Which credentials a request carries: none, one token for everything, or a GitHub App's
//! installation token for the repository the request is about (minted on first use, cached
//! until shortly before expiry, re-minted when GitHub refuses it).

use http::{HeaderValue, Method, StatusCode};

use super::app::{AppAuth, Expiring};
use super::locked;
use super::redirects::{Hop, Via};
use super::transport::{Outcome, Req, Transport};
use crate::ForgeError;

/// How the forge authenticates.
pub enum Auth {
    /// A token (`forge.github.token_env`), or none: public data only, no writes.
    Token(Option<String>),
    /// A GitHub App (`forge.github.app`).
    App(Box<AppAuth>),
}

/// A bearer `Authorization` value, marked sensitive so no layer prints it.
pub fn bearer(token: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    v.set_sensitive(true);
    Some(v)
}

impl Transport {
    /// The `Authorization` value for `req` (`None`: anonymous). With an App this may cost two
    /// requests the first time a repository is used: the installation lookup and the token.
    pub(super) async fn credentials(&self, req: &Req) -> Result<Option<HeaderValue>, Outcome> {
        let app = match &self.auth {
            Auth::Token(t) => return Ok(t.as_deref().and_then(bearer)),
            Auth::App(app) => app,
        };
        let Some(repo) = req.scope.as_deref() else {
            return Ok(None);
        };
        let now = self.clock.now();
        if let Some(t) = app.cached_token(repo, now) {
            return Ok(bearer(&t));
        }
        let installation = self.installation_of(app, repo).await?;
        let what = format!(
            "an installation token of GitHub App {} for {repo}",
            app.creds.app_id
        );
        let r = self
            .app_request(
                app,
                Method::POST,
                &format!("/app/installations/{installation}/access_tokens"),
                Some(app.token_request(repo)),
            )
            .await?;
        if !r.status.is_success() {
            let (msg, _) = r.message();
            return Err(Outcome::Failed(ForgeError::Rejected {
                what,
                reason: self.scrub(format!(
                    "GitHub answered {} ({msg}): grant the App's installation on `{}` access \
                     to this repository, with the permissions docs/github-setup.md lists",
                    r.status,
                    repo.split('/').next().unwrap_or(repo)
                )),
            }));
        }
        let v: serde_json::Value = r.json(&what).map_err(Outcome::Failed)?;
        let token = v["token"].as_str().unwrap_or_default().to_string();
        let expires_at = v["expires_at"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or(now + chrono::Duration::minutes(10));
        if token.is_empty() {
            return Err(Outcome::Failed(ForgeError::Io {
                what,
                reason: "GitHub's answer has no token".into(),
            }));
        }
        self.add_secret(&token);
        locked(&app.tokens).insert(
            repo.to_string(),
            Expiring {
                token: token.clone(),
                expires_at,
            },
        );
        Ok(bearer(&token))
    }

    /// The installation of the App that covers `repo` (cached per repository).
    async fn installation_of(&self, app: &AppAuth, repo: &str) -> Result<u64, Outcome> {
        if let Some(id) = locked(&app.installations).get(repo) {
            return Ok(*id);
        }
        let owner = repo.split('/').next().unwrap_or(repo);
        let what = format!(
            "the installation of GitHub App {} for {repo}",
            app.creds.app_id
        );
        let r = self
            .app_request(
                app,
                Method::GET,
                &format!("/repos/{repo}/installation"),
                None,
            )
            .await?;
        if r.status == StatusCode::NOT_FOUND {
            return Err(Outcome::Failed(ForgeError::Rejected {
                what,
                reason: format!(
                    "GitHub App {} is not installed on `{owner}`, or its installation does not \
                     include `{repo}`: install the App on `{owner}` and grant it this \
                     repository (docs/github-setup.md)",
                    app.creds.app_id
                ),
            }));
        }
        if !r.status.is_success() {
            let (msg, _) = r.message();
            return Err(Outcome::Failed(ForgeError::Unauthorized {
                what: self.scrub(format!("{what} (GitHub: {} {msg})", r.status)),
                token_env: "forge.github.app".into(),
            }));
        }
        let v: serde_json::Value = r.json(&what).map_err(Outcome::Failed)?;
        let id = v["id"].as_u64().ok_or_else(|| {
            Outcome::Failed(ForgeError::Io {
                what: what.clone(),
                reason: "GitHub's answer has no installation id".into(),
            })
        })?;
        if let Some(slug) = v["app_slug"].as_str().filter(|s| !s.is_empty()) {
            *locked(&app.slug) = Some(slug.to_string());
        }
        locked(&app.installations).insert(repo.to_string(), id);
        Ok(id)
    }

    /// One request authenticated as the App itself (JWT). Transport failures and server
    /// errors come back as the outcome the caller's retry loop knows how to wait for.
    async fn app_request(
        &self,
        app: &AppAuth,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<super::transport::Resp, Outcome> {
        let (jwt, new) = app.jwt_at(self.clock.now()).map_err(|reason| {
            Outcome::Failed(ForgeError::Rejected {
                what: "forge.github.app".into(),
                reason,
            })
        })?;
        if new {
            self.add_secret(&jwt);
        }
        let req = match body {
            Some(b) => Req::json(method.clone(), path, &b),
            None => Req::get(path),
        };
        let hop = Hop {
            via: Via::Api,
            uri: format!("{}{path}", self.api_base_path),
            method,
            keep_body: true,
        };
        let r = self.send(&req, &hop, bearer(&jwt), None).await?;
        match self.classify(r) {
            Outcome::Ok(r) | Outcome::Refused(r) => Ok(r),
            other => Err(other),
        }
    }
}
