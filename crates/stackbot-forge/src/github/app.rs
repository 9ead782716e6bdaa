//! GitHub App authentication: the App's private key signs short-lived JWTs (RS256), the JWT
//! finds the installation that covers a repository (`GET /repos/{owner}/{repo}/installation`)
//! and mints an installation token for exactly that repository with exactly the permissions
//! the bot uses (`POST /app/installations/{id}/access_tokens`). Tokens are cached until shortly
//! before they expire, by the run's clock.
//!
//! Why an App: tenant repositories live in many organisations, one personal token cannot reach
//! them all, and `GITHUB_TOKEN` cannot trigger the tenants' CI. Why per repository: a leaked
//! token then opens one repository for at most an hour, with contents and pull requests only.
//!
//! The key is parsed once and kept only as ring's key pair: it is never formatted, logged or
//! put in an error. JWTs and installation tokens are registered with the transport's scrubber.

use std::collections::HashMap;
use std::sync::Mutex;

use base64::Engine as _;
use chrono::{DateTime, Duration, Utc};
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};

use super::locked;

/// The permissions an installation token is minted with: commits, branches, tags, releases
/// (contents) and pull requests with their comments. Nothing else.
pub const PERMISSIONS: &[(&str, &str)] = &[("contents", "write"), ("pull_requests", "write")];

/// How long before its expiry a cached token is replaced (GitHub's tokens live one hour; a
/// request started just before expiry must not arrive just after).
pub const REFRESH_MARGIN: Duration = Duration::minutes(5);

/// A GitHub App's identity: its id and its RSA private key.
pub struct AppCredentials {
    pub app_id: u64,
    key: RsaKeyPair,
}

impl std::fmt::Debug for AppCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppCredentials")
            .field("app_id", &self.app_id)
            .field("key", &"<redacted>")
            .finish()
    }
}

impl AppCredentials {
    /// Parse the private key GitHub hands out (PEM, `BEGIN RSA PRIVATE KEY`, PKCS#1) or its
    /// PKCS#8 form (`BEGIN PRIVATE KEY`). Errors say what is wrong, never what the key is.
    pub fn from_pem(app_id: u64, pem: &str) -> Result<Self, String> {
        let (label, der) = pem_body(pem).ok_or_else(|| {
            "not a PEM private key (expected `-----BEGIN RSA PRIVATE KEY-----`, as downloaded \
             from the App's settings)"
                .to_string()
        })?;
        let key = match label.as_str() {
            "RSA PRIVATE KEY" => RsaKeyPair::from_der(&der),
            "PRIVATE KEY" => RsaKeyPair::from_pkcs8(&der),
            other => {
                return Err(format!(
                    "a PEM `{other}` is not an RSA private key; use the .pem file GitHub \
                     generated for the App"
                ));
            }
        }
        .map_err(|e| format!("the RSA private key is not usable: {e}"))?;
        Ok(AppCredentials { app_id, key })
    }

    /// A JWT for the App, valid from a minute ago (clock skew) for nine minutes (GitHub allows
    /// ten at most).
    pub fn jwt(&self, now: DateTime<Utc>) -> Result<(String, DateTime<Utc>), String> {
        let iat = now - Duration::seconds(60);
        let exp = now + Duration::minutes(9);
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        let header = b64(br#"{"alg":"RS256","typ":"JWT"}"#);
        let claims = b64(serde_json::json!({
            "iat": iat.timestamp(),
            "exp": exp.timestamp(),
            "iss": self.app_id.to_string(),
        })
        .to_string()
        .as_bytes());
        let signing_input = format!("{header}.{claims}");
        let mut sig = vec![0; self.key.public().modulus_len()];
        self.key
            .sign(
                &RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                signing_input.as_bytes(),
                &mut sig,
            )
            .map_err(|_| "signing the App's JWT failed".to_string())?;
        Ok((format!("{signing_input}.{}", b64(&sig)), exp))
    }
}

/// The label and DER bytes of the first PEM block.
fn pem_body(pem: &str) -> Option<(String, Vec<u8>)> {
    let start = pem.find("-----BEGIN ")?;
    let rest = &pem[start + "-----BEGIN ".len()..];
    let label_end = rest.find("-----")?;
    let label = rest[..label_end].to_string();
    let body_start = label_end + 5;
    let end_marker = format!("-----END {label}-----");
    let body_end = rest.find(&end_marker)?;
    let b64: String = rest[body_start..body_end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    Some((label, der))
}

/// A token and when it stops working.
#[derive(Clone)]
pub struct Expiring {
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

impl Expiring {
    /// Usable at `now`, with the refresh margin.
    pub fn fresh(&self, now: DateTime<Utc>) -> bool {
        now + REFRESH_MARGIN < self.expires_at
    }
}

/// The App's state during a run: its JWT, and per repository the installation and token.
pub struct AppAuth {
    pub creds: AppCredentials,
    pub jwt: Mutex<Option<Expiring>>,
    /// `owner/name` (lower-case) → installation id.
    pub installations: Mutex<HashMap<String, u64>>,
    /// `owner/name` (lower-case) → installation token for that repository.
    pub tokens: Mutex<HashMap<String, Expiring>>,
    /// `owner/name` (lower-case) of the repositories whose tokens also get `issues: write`: the
    /// cluster-stacks repository when the status dashboard is on. Every other token stays at
    /// [`PERMISSIONS`].
    pub issue_writers: Vec<String>,
    /// `owner/name` (lower-case) of the repositories whose tokens also get `actions: write`:
    /// the cluster-stacks repository when a stack's conformance gate dispatches a workflow.
    pub actions_writers: Vec<String>,
    /// The App's slug, as the first installation lookup reports it (`app_slug`): GitHub
    /// authors the commits it signs for the App as `<slug>[bot]`.
    pub slug: Mutex<Option<String>>,
}

impl AppAuth {
    pub fn new(creds: AppCredentials) -> Self {
        AppAuth {
            creds,
            jwt: Mutex::new(None),
            installations: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
            issue_writers: Vec::new(),
            actions_writers: Vec::new(),
            slug: Mutex::new(None),
        }
    }

    /// A JWT valid at `now` (reused while fresh). `new` is true when it was just signed.
    pub fn jwt_at(&self, now: DateTime<Utc>) -> Result<(String, bool), String> {
        let mut j = locked(&self.jwt);
        if let Some(e) = j.as_ref()
            && now + Duration::minutes(1) < e.expires_at
        {
            return Ok((e.token.clone(), false));
        }
        let (token, expires_at) = self.creds.jwt(now)?;
        *j = Some(Expiring {
            token: token.clone(),
            expires_at,
        });
        Ok((token, true))
    }

    /// The App's bot account (`<slug>[bot]`), once an installation lookup has named the slug.
    pub fn bot_login(&self) -> Option<String> {
        let slug = locked(&self.slug);
        slug.as_ref().map(|s| format!("{s}[bot]"))
    }

    /// The cached, still fresh installation token of `repo`.
    pub fn cached_token(&self, repo: &str, now: DateTime<Utc>) -> Option<String> {
        let t = locked(&self.tokens);
        t.get(repo)
            .filter(|e| e.fresh(now))
            .map(|e| e.token.clone())
    }

    /// Forget `repo`'s token (GitHub refused it: revoked or expired early).
    pub fn forget_token(&self, repo: &str) {
        locked(&self.tokens).remove(repo);
    }

    /// The body of the access-token request for the repository `full` (`owner/name`): exactly
    /// [`PERMISSIONS`], plus `issues: write` where the dashboard issue lives.
    pub fn token_request(&self, full: &str) -> serde_json::Value {
        let mut permissions: serde_json::Map<String, serde_json::Value> = PERMISSIONS
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect();
        if self
            .issue_writers
            .iter()
            .any(|r| r.eq_ignore_ascii_case(full))
        {
            permissions.insert("issues".into(), "write".into());
        }
        if self
            .actions_writers
            .iter()
            .any(|r| r.eq_ignore_ascii_case(full))
        {
            permissions.insert("actions".into(), "write".into());
        }
        let name = full.split_once('/').map_or(full, |(_, n)| n);
        serde_json::json!({"repositories": [name], "permissions": permissions})
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 2048-bit RSA key made for these tests only (PKCS#1, as GitHub hands them out).
    pub const TEST_KEY: &str =
        include_str!("../../../../tests/fixtures/github/app/test-app-private-key.pem");

    #[test]
    fn a_jwt_is_rs256_signed_by_the_key_with_github_s_claims() {
        let c = AppCredentials::from_pem(42, TEST_KEY).unwrap();
        let now: DateTime<Utc> = "2026-05-01T12:00:00Z".parse().unwrap();
        let (jwt, exp) = c.jwt(now).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let dec = |s: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .unwrap()
        };
        let header: serde_json::Value = serde_json::from_slice(&dec(parts[0])).unwrap();
        assert_eq!(header["alg"], "RS256");
        let claims: serde_json::Value = serde_json::from_slice(&dec(parts[1])).unwrap();
        assert_eq!(claims["iss"], "42");
        assert_eq!(claims["iat"], now.timestamp() - 60);
        assert_eq!(claims["exp"], now.timestamp() + 540);
        assert_eq!(exp.timestamp(), now.timestamp() + 540);
        let public = c.key.public().as_ref().to_vec();
        ring::signature::UnparsedPublicKey::new(
            &ring::signature::RSA_PKCS1_2048_8192_SHA256,
            public,
        )
        .verify(
            format!("{}.{}", parts[0], parts[1]).as_bytes(),
            &dec(parts[2]),
        )
        .expect("the signature verifies with the App's public key");
    }

    #[test]
    fn bad_keys_are_refused_without_showing_them() {
        let e = AppCredentials::from_pem(1, "not a key at all").unwrap_err();
        assert!(e.contains("PEM"), "{e}");
        let bogus =
            "-----BEGIN RSA PRIVATE KEY-----\nU0VDUkVUU0VDUkVU\n-----END RSA PRIVATE KEY-----\n";
        let e = AppCredentials::from_pem(1, bogus).unwrap_err();
        assert!(!e.contains("U0VDUkVU"), "{e}");
        let d = format!("{:?}", AppCredentials::from_pem(7, TEST_KEY).unwrap());
        assert!(d.contains("<redacted>") && !d.contains("MII"), "{d}");
    }

    #[test]
    fn tokens_are_reused_until_shortly_before_expiry() {
        let a = AppAuth::new(AppCredentials::from_pem(1, TEST_KEY).unwrap());
        let now: DateTime<Utc> = "2026-05-01T12:00:00Z".parse().unwrap();
        a.tokens.lock().unwrap().insert(
            "o/r".into(),
            Expiring {
                token: "ghs_x".into(),
                expires_at: now + Duration::hours(1),
            },
        );
        assert_eq!(a.cached_token("o/r", now).as_deref(), Some("ghs_x"));
        assert_eq!(
            a.cached_token("o/r", now + Duration::minutes(54))
                .as_deref(),
            Some("ghs_x")
        );
        assert_eq!(a.cached_token("o/r", now + Duration::minutes(56)), None);
        let (j1, new1) = a.jwt_at(now).unwrap();
        let (j2, new2) = a.jwt_at(now + Duration::minutes(5)).unwrap();
        assert!(new1 && !new2 && j1 == j2);
        let (j3, new3) = a
            .jwt_at(now + Duration::minutes(8) + Duration::seconds(30))
            .unwrap();
        assert!(new3 && j3 != j1);
        let mut app = AppAuth::new(AppCredentials::from_pem(1, TEST_KEY).unwrap());
        assert_eq!(
            app.token_request("acme/gitops"),
            serde_json::json!({"repositories": ["gitops"],
                "permissions": {"contents": "write", "pull_requests": "write"}})
        );
        // Only the repository holding the dashboard issue also gets `issues: write`.
        app.issue_writers.push("scs/cluster-stacks".into());
        assert_eq!(
            app.token_request("SCS/cluster-stacks")["permissions"]["issues"],
            "write"
        );
        assert!(app.token_request("acme/gitops")["permissions"]["issues"].is_null());
    }
}
