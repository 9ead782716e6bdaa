//! The request strategies every resource module uses: reads that may be absent, all pages of
//! a list, and the two kinds of writes (repeatable ones, and creating ones that look before
//! they repeat, so an ambiguous 502 never becomes a duplicate).

use http::{Method, StatusCode};
use serde_json::Value;

use super::GithubForge;
use super::transport::{Outcome, Req, Resp, step};
use crate::net::{Origin, link_header, next_link};
use crate::{ForgeError, ForgeResult};
use stackbot_net::retry::{Ended, Step};

impl GithubForge {
    /// GET that must succeed.
    pub(super) async fn get(&self, what: &str, path: &str) -> ForgeResult<Resp> {
        self.read_ok(what, &Req::get(path)).await
    }

    /// A read that must succeed.
    pub(super) async fn read_ok(&self, what: &str, req: &Req) -> ForgeResult<Resp> {
        match self.t.read(what, req).await? {
            Ok(r) => Ok(r),
            Err(r) => Err(self.refusal(what, &r)),
        }
    }

    /// GET that must succeed, its JSON.
    pub(super) async fn get_json(&self, what: &str, path: &str) -> ForgeResult<Value> {
        self.get(what, path).await?.json(what)
    }

    /// GET of JSON where 404 (or 409 "repository is empty") means "absent".
    pub(super) async fn get_opt(&self, what: &str, path: &str) -> ForgeResult<Option<Value>> {
        match self.t.read(what, &Req::get(path)).await? {
            Ok(r) => r.json(what).map(Some),
            Err(r) if r.status == StatusCode::NOT_FOUND || r.status == StatusCode::CONFLICT => {
                Ok(None)
            }
            Err(r) => Err(self.refusal(what, &r)),
        }
    }

    /// Every page of a list endpoint, following `Link: rel="next"`. The items are each page's
    /// array: the page itself, or its `field`.
    pub(super) async fn get_all(
        &self,
        what: &str,
        first: String,
        field: Option<&str>,
    ) -> ForgeResult<Vec<Value>> {
        let mut out = Vec::new();
        let mut next = Some(first);
        let mut pages = 0;
        while let Some(path) = next.take() {
            pages += 1;
            if pages > 10_000 {
                return Err(ForgeError::Io {
                    what: what.into(),
                    reason: "more than 10000 pages; the Link headers loop".into(),
                });
            }
            let r = self.get(what, &path).await?;
            let mut page: Value = r.json(what)?;
            if let Some(f) = field {
                page = page.get_mut(f).map(Value::take).unwrap_or_default();
            }
            if let Value::Array(items) = page {
                out.extend(items);
            }
            if let Some(url) = link_header(&r.headers).as_deref().and_then(next_link) {
                next = Some(self.api_path_of(what, &url)?);
            }
        }
        Ok(out)
    }

    /// Turn an absolute URL GitHub gave us into a path for the API client, refusing any host
    /// but the API's own (the token must not follow a link elsewhere).
    pub(super) fn api_path_of(&self, what: &str, url: &str) -> ForgeResult<String> {
        let u: http::Uri = url.parse().map_err(|_| ForgeError::Io {
            what: what.into(),
            reason: format!("GitHub returned an unparsable link `{url}`"),
        })?;
        if u.authority().is_some() {
            match Origin::of(&u) {
                Some(o) if o == self.api_origin => {}
                o => {
                    return Err(ForgeError::Io {
                        what: what.into(),
                        reason: format!(
                            "GitHub linked to `{}`, not the configured API host `{}`",
                            o.map_or_else(|| url.to_string(), |o| o.to_string()),
                            self.api_origin
                        ),
                    });
                }
            }
        }
        Ok(u.path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
            .to_string())
    }

    /// Take one attempt from the hourly write budget; every attempt counts, since GitHub
    /// counts every request that reaches it.
    pub(super) fn spend_write(&self, what: &str) -> ForgeResult<()> {
        self.t
            .budget
            .spend(self.t.clock.as_ref())
            .map_err(|reason| ForgeError::Transient {
                what: what.into(),
                reason,
            })
    }

    /// A write that may simply be repeated (PATCH with the full desired state, DELETE,
    /// content-addressed objects). Returns the final answer and whether an earlier attempt
    /// was ambiguous (so a 404 on DELETE means "already gone"). Every attempt spends from the
    /// write budget.
    pub(super) async fn write_idem(
        &self,
        what: &str,
        req: &Req,
    ) -> ForgeResult<(Result<Resp, Resp>, bool)> {
        let mut ambiguous = false;
        let attempt = async |_| {
            if let Err(e) = self.spend_write(what) {
                return Step::Stop(Outcome::Failed(e));
            }
            match self.t.attempt(req).await {
                Outcome::Ok(r) => Step::Done(Ok(r)),
                Outcome::Refused(r) => Step::Done(Err(r)),
                other => {
                    ambiguous |= matches!(other, Outcome::Ambiguous(..));
                    step(other)
                }
            }
        };
        let got = self.t.retried(what, None, attempt).await;
        Ok((got.map_err(|e| self.t.ended(what, e))?, ambiguous))
    }

    /// An idempotent write whose answer must be 2xx.
    pub(super) async fn write_ok(&self, what: &str, req: &Req) -> ForgeResult<Resp> {
        match self.write_idem(what, req).await?.0 {
            Ok(r) => Ok(r),
            Err(r) => Err(self.refusal(what, &r)),
        }
    }

    /// [`write_ok`](Self::write_ok) of a JSON `body` to `path`.
    pub(super) async fn write_json(
        &self,
        what: &str,
        method: Method,
        path: String,
        body: &Value,
    ) -> ForgeResult<Resp> {
        self.write_ok(what, &Req::json(method, path, body)).await
    }

    /// DELETE `path`. A `404` after an ambiguous attempt is that attempt having done it.
    pub(super) async fn delete(&self, what: &str, path: String) -> ForgeResult<()> {
        match self.write_idem(what, &Req::delete(path)).await? {
            (Ok(_), _) => Ok(()),
            (Err(r), true) if r.status == StatusCode::NOT_FOUND => Ok(()),
            (Err(r), _) => Err(self.refusal(what, &r)),
        }
    }

    /// A creating write. After an ambiguous attempt, `lookup` decides whether it took effect
    /// (`Some`: done, return that) before anything is sent again, and before giving up.
    pub(super) async fn write_checked<T>(
        &self,
        what: &str,
        req: &Req,
        parse: impl Fn(&Resp) -> ForgeResult<T>,
        lookup: impl AsyncFn() -> ForgeResult<Option<T>>,
    ) -> ForgeResult<T> {
        let took_effect = async || {
            let done = lookup().await?;
            if done.is_some() {
                tracing::warn!(
                    target: "stackbot::forge::github",
                    "{what}: the failed attempt had taken effect; not repeating it"
                );
            }
            Ok::<_, ForgeError>(done)
        };
        let (mut ambiguous, mut last_ambiguous) = (false, false);
        let attempt = async |_| {
            if last_ambiguous {
                match took_effect().await {
                    Ok(Some(done)) => return Step::Done(Ok(done)),
                    Ok(None) => {}
                    Err(e) => return Step::Done(Err(e)),
                }
            }
            if let Err(e) = self.spend_write(what) {
                return Step::Done(Err(e));
            }
            match self.t.attempt(req).await {
                Outcome::Ok(r) => Step::Done(parse(&r)),
                Outcome::Refused(r) => {
                    if ambiguous {
                        match lookup().await {
                            Ok(Some(done)) => {
                                tracing::warn!(
                                    target: "stackbot::forge::github",
                                    "{what}: an earlier failed attempt had taken effect; using it"
                                );
                                return Step::Done(Ok(done));
                            }
                            Ok(None) => {}
                            Err(e) => return Step::Done(Err(e)),
                        }
                    }
                    Step::Done(Err(self.refusal(what, &r)))
                }
                other => {
                    last_ambiguous = matches!(other, Outcome::Ambiguous(..));
                    ambiguous |= last_ambiguous;
                    step(other)
                }
            }
        };
        let ended = match self.t.retried(what, None, attempt).await {
            Ok(done) => return done,
            Err(ended) => ended,
        };
        if let Ended::GaveUp {
            last: Outcome::Ambiguous(..),
            ..
        } = ended
            && let Some(done) = took_effect().await?
        {
            return Ok(done);
        }
        Err(self.t.ended(what, ended))
    }
}
