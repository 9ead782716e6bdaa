//! The process environment as a value.
//!
//! Tokens (`forge.github.token_env`, `upstream.token_env`, `OCI_*`), `GITHUB_ACTIONS` and the
//! like are read once at the edge into an [`Env`] and passed down, so the library never calls
//! `std::env::var` itself: tests build an `Env` from a map, and a secret can only reach code
//! that was handed it. The one reader of the process environment is the binary's
//! `stackbot::env::from_process`; core cannot read it (`crates/stackbot-core/clippy.toml`).

use std::collections::BTreeMap;

/// A snapshot of environment variables.
#[derive(Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

impl std::fmt::Debug for Env {
    /// Names only: values may be secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.vars.keys()).finish()
    }
}

impl Env {
    /// An environment with exactly these variables (tests, simulations).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// The value of `name` when set to something other than blanks: an empty `GITHUB_TOKEN`
    /// (a common mistake in workflow files) means "no token", not "the empty token".
    pub fn non_empty(&self, name: &str) -> Option<String> {
        self.get(name)
            .filter(|v| !v.trim().is_empty())
            .map(str::to_string)
    }

    /// Set a variable (builder style, for tests).
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_values_are_unset_and_debug_shows_no_values() {
        let e = Env::from_pairs([("TOKEN", "  "), ("OTHER", "s3cr3t")]);
        assert_eq!(e.non_empty("TOKEN"), None);
        assert_eq!(e.non_empty("OTHER").as_deref(), Some("s3cr3t"));
        assert!(!format!("{e:?}").contains("s3cr3t"));
    }
}
