//! The one HTTP engine of the process: reqwest's async client on rustls with ring (the tree
//! has no second TLS stack and no aws-lc-rs), with the one timeout policy
//! ([`crate::timeouts`]), run on the one runtime ([`crate::runtime`]). The upstream reader
//! builds on it; each client adds only what is its own (upstream: its redirect rule and
//! whole-request bound).

/// Install rustls' ring provider once per process; later calls are no-ops. reqwest is built
/// with `rustls-no-provider`, so a client needs a provider installed before it is built.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A client builder with the process's TLS provider, user agent and timeouts.
pub fn builder() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(concat!("stackbot/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(crate::timeouts::CONNECT)
        .read_timeout(crate::timeouts::READ)
}
