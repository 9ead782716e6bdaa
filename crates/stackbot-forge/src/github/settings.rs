//! What `forge.github` means for the client: validated URLs, where uploads go, and the pacing,
//! budget and retry defaults that differ between a remote host and a loopback test server.

use std::time::Duration;

use super::RetryPolicy;
use crate::config::GithubForgeConfig;
use crate::net::Origin;
use crate::{ForgeError, ForgeResult};

/// The client settings derived from the configuration.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    /// `forge.github.api_url` without a trailing `/`.
    pub api_url: String,
    /// Scheme, host and port of the API, normalised (`https://GHE:443` is `https://ghe`).
    pub api_origin: Origin,
    /// Where release assets are uploaded (normalised origin).
    pub upload_origin: Origin,
    pub policy: RetryPolicy,
    /// Minimum gap between two mutating requests.
    pub write_interval: Duration,
    /// Cap of mutating requests per rolling hour; `None`: unlimited.
    pub writes_per_hour: Option<u32>,
}

impl Settings {
    pub fn from_config(cfg: &GithubForgeConfig) -> ForgeResult<Settings> {
        let api = check_url("forge.github.api_url", cfg.api_url.trim_end_matches('/'))?;
        let api_origin = origin_of("forge.github.api_url", &api)?;
        let upload_origin = match &cfg.upload_url {
            Some(u) => origin_of(
                "forge.github.upload_url",
                &check_url("forge.github.upload_url", u)?,
            )?,
            None if api_origin == Origin::parse("https://api.github.com").expect("valid") => {
                Origin::parse("https://uploads.github.com").expect("valid")
            }
            // GitHub Enterprise serves uploads on the API host (`/api/uploads`); a fake too.
            None => api_origin.clone(),
        };
        let loopback = api_origin.is_loopback();
        let mut policy = RetryPolicy::for_host(loopback);
        if let Some(n) = cfg.max_retries {
            policy.max_retries = n;
        }
        let write_interval =
            Duration::from_millis(
                cfg.write_interval_ms
                    .unwrap_or(if loopback { 0 } else { 1000 }),
            );
        let writes_per_hour = match cfg.writes_per_hour {
            Some(0) => {
                return Err(ForgeError::Rejected {
                    what: "forge.github.writes_per_hour".into(),
                    reason: "must be at least 1 (leave it out for the default: 450 for a \
                             remote host, unlimited for loopback)"
                        .into(),
                });
            }
            Some(n) => Some(n),
            None if loopback => None,
            None => Some(450),
        };
        Ok(Settings {
            api_url: cfg.api_url.trim_end_matches('/').to_string(),
            api_origin,
            upload_origin,
            policy,
            write_interval,
            writes_per_hour,
        })
    }
}

fn origin_of(field: &str, u: &http::Uri) -> ForgeResult<Origin> {
    Origin::of(u).ok_or_else(|| ForgeError::Rejected {
        what: format!("`{field}` (`{u}`)"),
        reason: "the URL needs a scheme and a host, e.g. `https://api.github.com`".into(),
    })
}

/// Parse a configured URL; plain `http://` only for loopback hosts, because the token would
/// otherwise cross the network unencrypted.
fn check_url(field: &str, url: &str) -> ForgeResult<http::Uri> {
    let reject = |reason: String| ForgeError::Rejected {
        what: format!("`{field}` (`{url}`)"),
        reason,
    };
    let u: http::Uri = url.parse().map_err(|e| {
        reject(format!(
            "not a URL: {e}; write e.g. `https://api.github.com`"
        ))
    })?;
    let host = u
        .host()
        .ok_or_else(|| reject("the URL has no host".into()))?;
    match u.scheme_str() {
        Some("https") => Ok(u),
        Some("http") if crate::net::is_loopback_host(host) => Ok(u),
        Some("http") => Err(reject(
            "plain http:// is only allowed for loopback hosts (127.0.0.0/8, ::1, localhost); \
             use https:// (TLS is always verified)"
                .into(),
        )),
        _ => Err(reject("the URL must start with https://".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_only_accepted_for_loopback() {
        assert!(check_url("f", "http://127.0.0.1:8080").is_ok());
        assert!(check_url("f", "http://127.8.9.10:80/api/v3").is_ok());
        assert!(check_url("f", "http://localhost:1").is_ok());
        assert!(check_url("f", "http://[::1]:1").is_ok());
        assert!(check_url("f", "https://ghe.example.com/api/v3").is_ok());
        let e = check_url("forge.github.api_url", "http://ghe.example.com/api/v3")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("forge.github.api_url") && e.contains("https://"),
            "{e}"
        );
        assert!(check_url("f", "http://128.0.0.1").is_err());
        assert!(check_url("f", "ftp://127.0.0.1").is_err());
    }

    #[test]
    fn remote_hosts_get_paced_writes_and_default_upload_host() {
        let f = Settings::from_config(&GithubForgeConfig::default()).unwrap();
        assert_eq!(f.upload_origin.to_string(), "https://uploads.github.com");
        let ghe = GithubForgeConfig {
            api_url: "https://ghe.example.com/api/v3".into(),
            ..GithubForgeConfig::default()
        };
        let f = Settings::from_config(&ghe).unwrap();
        assert_eq!(f.upload_origin.to_string(), "https://ghe.example.com");
        assert_eq!(
            f.writes_per_hour,
            Some(450),
            "remote hosts get an hourly budget"
        );
        let local = GithubForgeConfig {
            api_url: "http://127.0.0.1:9/api".into(),
            ..GithubForgeConfig::default()
        };
        let f = Settings::from_config(&local).unwrap();
        assert_eq!(f.writes_per_hour, None, "loopback is unlimited unless set");
        let zero = GithubForgeConfig {
            writes_per_hour: Some(0),
            ..local
        };
        let err = Settings::from_config(&zero).unwrap_err().to_string();
        assert!(err.contains("writes_per_hour"), "{err}");
    }
}
