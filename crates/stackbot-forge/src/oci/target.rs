//! Where a release is pushed and as whom, read the way csctl and CSO read it.
//!
//! csctl and the operator take `OCI_REGISTRY` (credential scope), `OCI_REPOSITORY` (full
//! reference) and either `OCI_ACCESS_TOKEN` (base64-encoded, sent as a bearer token) or
//! `OCI_USERNAME` + `OCI_PASSWORD` (basic). Keeping the same variables means one secret setup
//! serves csctl, the operator and the bot. Resolution is a pure function of the config and an
//! environment lookup, so it is tested without touching the process environment.

use std::fmt;

use base64::Engine as _;

use super::OciError;
use crate::config::OciConfig;

/// A secret string. `Debug` and `Display` never show it, so a stray `{:?}` cannot leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wrap a secret value.
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }
    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"***\"")
    }
}

/// How the bot authenticates to the registry.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// No credentials: enough to pull from a public repository, and to push to a local
    /// registry without auth.
    Anonymous,
    /// Bearer token, already base64-encoded as csctl encodes `OCI_ACCESS_TOKEN`.
    Bearer(Secret),
    /// HTTP basic auth.
    Basic { username: String, password: Secret },
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Anonymous => f.write_str("Anonymous"),
            Credentials::Bearer(_) => f.write_str("Bearer(***)"),
            Credentials::Basic { username, .. } => f
                .debug_struct("Basic")
                .field("username", username)
                .field("password", &"***")
                .finish(),
        }
    }
}

impl Credentials {
    /// Every form in which a secret could appear in text (raw, base64, basic header value).
    fn secret_forms(&self) -> Vec<String> {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        match self {
            Credentials::Anonymous => vec![],
            Credentials::Bearer(t) => {
                let mut v = vec![t.expose().to_string()];
                if let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(t.expose())
                    && let Ok(raw) = String::from_utf8(raw)
                {
                    v.push(raw);
                }
                v
            }
            Credentials::Basic { username, password } => vec![
                password.expose().to_string(),
                b64(password.expose()),
                b64(&format!("{username}:{}", password.expose())),
            ],
        }
    }

    /// Replace every form of the secret in `text` by `***`. Registry and transport errors
    /// pass through here before they become messages, as a second line of defence.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in self.secret_forms() {
            // Very short secrets would turn every message into asterisks and reveal more
            // by the pattern than they hide; they are still never printed on purpose.
            if s.len() >= 4 {
                out = out.replace(&s, "***");
            }
        }
        out
    }

    /// A word for logs and plans: which kind of credentials, never their value.
    pub fn kind(&self) -> &'static str {
        match self {
            Credentials::Anonymous => "anonymous",
            Credentials::Bearer(_) => "access token",
            Credentials::Basic { .. } => "username and password",
        }
    }
}

/// A resolved OCI repository target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciTarget {
    /// Registry host, with port if any (`registry.scs.community`, `127.0.0.1:5000`).
    pub registry: String,
    /// Repository path inside the registry (`kaas/cluster-stacks`).
    pub repository: String,
    /// Talk plain HTTP (loopback registries only).
    pub plain_http: bool,
    pub credentials: Credentials,
}

fn config_err(message: impl Into<String>, hint: impl Into<String>) -> OciError {
    OciError::Config {
        message: message.into(),
        hint: hint.into(),
    }
}

/// The host of a registry (`127.0.0.1:5000` → `127.0.0.1`, `[::1]:5000` → `[::1]`).
pub fn host_of(registry: &str) -> &str {
    registry
        .rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(registry, |(host, _)| host)
}

/// Whether a registry host (`host`, `host:port`, `[::1]:port`) is on this machine.
pub fn is_loopback(registry: &str) -> bool {
    crate::net::is_loopback_host(host_of(registry))
}

fn valid_repository_path(path: &str) -> bool {
    !path.is_empty()
        && path.split('/').all(|part| {
            !part.is_empty()
                && part.bytes().all(|b| {
                    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
                })
                && part.as_bytes()[0].is_ascii_alphanumeric()
                && part.as_bytes()[part.len() - 1].is_ascii_alphanumeric()
        })
}

impl OciTarget {
    /// Validate a registry host and a full repository reference as csctl takes them
    /// (`OCI_REGISTRY`, `OCI_REPOSITORY`).
    pub fn new(
        registry: &str,
        repository_ref: &str,
        plain_http: bool,
        credentials: Credentials,
    ) -> Result<Self, OciError> {
        let registry = registry.trim();
        if registry.is_empty() {
            return Err(config_err(
                "no registry host",
                "set `oci.registry` in the config or `OCI_REGISTRY` (e.g. `registry.scs.community`)",
            ));
        }
        if registry.contains("://") || registry.contains('/') {
            return Err(config_err(
                format!("registry `{registry}` must be a host name, not a URL"),
                "use e.g. `registry.scs.community` or `127.0.0.1:5000`; set `oci.plain_http: true` for a local HTTP registry",
            ));
        }
        let path = repository_ref
            .trim()
            .strip_prefix(registry)
            .and_then(|rest| rest.strip_prefix('/'))
            .ok_or_else(|| {
                config_err(
                    format!(
                        "repository `{repository_ref}` is not inside registry `{registry}`"
                    ),
                    format!(
                        "`oci.repository` / `OCI_REPOSITORY` is the full reference, e.g. `{registry}/kaas/cluster-stacks`"
                    ),
                )
            })?;
        if !valid_repository_path(path) {
            return Err(config_err(
                format!("repository path `{path}` is not a valid OCI repository name"),
                "use lowercase letters, digits and `._-`, separated by `/`",
            ));
        }
        if plain_http && !is_loopback(registry) {
            return Err(config_err(
                format!("plain HTTP to `{registry}` refused"),
                "plain HTTP is only allowed for a registry on this machine (127.0.0.1, ::1, localhost); remove `oci.plain_http`",
            ));
        }
        Ok(OciTarget {
            registry: registry.to_string(),
            repository: path.to_string(),
            plain_http,
            credentials,
        })
    }

    /// Resolve the target from the `oci:` section and an environment lookup (values in the
    /// config win over `OCI_REGISTRY` / `OCI_REPOSITORY`; credentials only ever come from the
    /// environment, under the variable names the config gives).
    pub fn from_config(
        config: &OciConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, OciError> {
        let get = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let registry = config
            .registry
            .clone()
            .or_else(|| get("OCI_REGISTRY"))
            .unwrap_or_default();
        let repository = config
            .repository
            .clone()
            .or_else(|| get("OCI_REPOSITORY"))
            .ok_or_else(|| {
                config_err(
                    "no repository",
                    "set `oci.repository` in the config or `OCI_REPOSITORY` (e.g. `registry.scs.community/kaas/cluster-stacks`)",
                )
            })?;
        let credentials = if let Some(token) = get(&config.access_token_env) {
            // csctl base64-encodes the token before handing it to oras as the access token.
            Credentials::Bearer(Secret::new(
                base64::engine::general_purpose::STANDARD.encode(token.trim()),
            ))
        } else {
            match (get(&config.username_env), get(&config.password_env)) {
                (Some(username), Some(password)) => Credentials::Basic {
                    username,
                    password: Secret::new(password),
                },
                (None, None) => Credentials::Anonymous,
                (user, _) => {
                    let (set, unset) = if user.is_some() {
                        (&config.username_env, &config.password_env)
                    } else {
                        (&config.password_env, &config.username_env)
                    };
                    return Err(config_err(
                        format!("`{set}` is set but `{unset}` is not"),
                        format!(
                            "basic auth needs both `{}` and `{}` (or set `{}`)",
                            config.username_env, config.password_env, config.access_token_env
                        ),
                    ));
                }
            }
        };
        OciTarget::new(&registry, &repository, config.plain_http, credentials)
    }

    /// The full repository reference (`registry/path`), what `OCI_REPOSITORY` holds.
    pub fn reference(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn config() -> OciConfig {
        yaml_serde::from_str("{}").unwrap()
    }

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn csctl_variables_resolve_registry_repository_and_token() {
        let t = OciTarget::from_config(
            &config(),
            env(&[
                ("OCI_REGISTRY", "registry.scs.community"),
                (
                    "OCI_REPOSITORY",
                    "registry.scs.community/kaas/cluster-stacks",
                ),
                ("OCI_ACCESS_TOKEN", "s3cret-token"),
                ("OCI_USERNAME", "ignored"),
            ]),
        )
        .unwrap();
        assert_eq!(t.registry, "registry.scs.community");
        assert_eq!(t.repository, "kaas/cluster-stacks");
        assert_eq!(t.reference(), "registry.scs.community/kaas/cluster-stacks");
        // csctl sends base64(token) as the bearer token.
        assert_eq!(
            t.credentials,
            Credentials::Bearer(Secret::new("czNjcmV0LXRva2Vu"))
        );
    }

    #[test]
    fn config_values_and_variable_names_override_the_defaults() {
        let mut c = config();
        c.registry = Some("127.0.0.1:5000".into());
        c.repository = Some("127.0.0.1:5000/stacks".into());
        c.username_env = "MY_USER".into();
        c.password_env = "MY_PASS".into();
        c.plain_http = true;
        let t = OciTarget::from_config(
            &c,
            env(&[
                ("OCI_REGISTRY", "elsewhere"),
                ("MY_USER", "bot"),
                ("MY_PASS", "hunter22"),
            ]),
        )
        .unwrap();
        assert_eq!(t.reference(), "127.0.0.1:5000/stacks");
        assert!(t.plain_http);
        assert_eq!(
            t.credentials,
            Credentials::Basic {
                username: "bot".into(),
                password: Secret::new("hunter22")
            }
        );
    }

    #[test]
    fn half_set_basic_auth_is_an_error_naming_both_variables() {
        let err = OciTarget::from_config(
            &config(),
            env(&[
                ("OCI_REGISTRY", "r.example"),
                ("OCI_REPOSITORY", "r.example/x"),
                ("OCI_USERNAME", "bot"),
            ]),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("OCI_USERNAME") && msg.contains("OCI_PASSWORD"),
            "{msg}"
        );
        assert!(err.is_invalid_input());
    }

    #[test]
    fn no_credentials_means_anonymous() {
        let t = OciTarget::from_config(
            &config(),
            env(&[
                ("OCI_REGISTRY", "r.example"),
                ("OCI_REPOSITORY", "r.example/x"),
            ]),
        )
        .unwrap();
        assert_eq!(t.credentials, Credentials::Anonymous);
    }

    #[test]
    fn bad_targets_are_refused_with_a_hint() {
        let c = Credentials::Anonymous;
        for (reg, repo, http) in [
            ("", "x/y", false),
            ("https://r.example", "r.example/x", false),
            ("r.example", "other.example/x", false),
            ("r.example", "r.example/", false),
            ("r.example", "r.example/Upper", false),
            ("r.example", "r.example/x", true),
            ("10.0.0.1:5000", "10.0.0.1:5000/x", true),
        ] {
            let e = OciTarget::new(reg, repo, http, c.clone()).unwrap_err();
            assert!(
                e.is_invalid_input() && e.to_string().contains("hint:"),
                "{e}"
            );
        }
        assert!(OciTarget::new("localhost:5000", "localhost:5000/a/b", true, c.clone()).is_ok());
        assert!(OciTarget::new("[::1]:5000", "[::1]:5000/a", true, c).is_ok());
    }

    #[test]
    fn secrets_never_show_in_debug_or_redacted_text() {
        let basic = Credentials::Basic {
            username: "bot".into(),
            password: Secret::new("hunter22"),
        };
        let dbg = format!("{basic:?}");
        assert!(!dbg.contains("hunter22"), "{dbg}");
        let header = base64::engine::general_purpose::STANDARD.encode("bot:hunter22");
        let redacted = basic.redact(&format!("sent hunter22 and Basic {header}"));
        assert!(!redacted.contains("hunter22") && !redacted.contains(&header));
        let bearer = Credentials::Bearer(Secret::new("czNjcmV0LXRva2Vu"));
        assert!(!format!("{bearer:?}").contains("czNj"));
        assert_eq!(
            bearer.redact("x czNjcmV0LXRva2Vu s3cret-token"),
            "x *** ***"
        );
        let target = OciTarget::new("r.example", "r.example/x", false, basic).unwrap();
        assert!(!format!("{target:?}").contains("hunter22"));
    }
}
