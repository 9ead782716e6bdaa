//! Origins are compared as origins, not as text: GitHub (Enterprise) may spell its host with
//! another letter case or an explicit default port in `upload_url` templates and pagination
//! `Link`s. The same server must be recognised (uploads to the upload host, pages followed with
//! the token), and GitHub's `/repositories/{id}/…` link form must be followed too.

use crate::support;

use std::sync::Arc;

use stackbot::clock::SystemClock;
use stackbot::config::GithubForgeConfig;
use stackbot::forge::github::GithubForge;
use stackbot::forge::{Forge, RepoRef};
use support::fake_github::{FakeGithub, FakeOptions};

const TOKEN: &str = "ghp_ORIGINStestTOKEN0123456789SECRET";

fn port_of(url: &str) -> u16 {
    let u: http::Uri = url.parse().unwrap();
    u.port_u16().unwrap()
}

fn forge(api_url: String, upload_url: String) -> GithubForge {
    let cfg = GithubForgeConfig {
        api_url,
        upload_url: Some(upload_url),
        ..GithubForgeConfig::default()
    };
    GithubForge::new(&cfg, Some(TOKEN.into()), Arc::new(SystemClock)).unwrap()
}

#[test]
fn another_spelling_of_the_api_and_upload_hosts_is_the_same_origin() {
    // GitHub writes `LOCALHOST` in every URL it returns; the configuration says `localhost`.
    let fake = FakeGithub::start_with(
        FakeOptions::default()
            .with_token(TOKEN)
            .with_url_host("LOCALHOST"),
    );
    fake.create_repo("scs/cluster-stacks", "main", &[("README.md", b"# s\n")]);
    let f = forge(
        format!("http://localhost:{}", fake.addr().port()),
        format!("http://localhost:{}", port_of(&fake.upload_url())),
    );
    let r = RepoRef::parse("scs/cluster-stacks").unwrap();
    // More than one page of releases: the `Link`s (in `/repositories/{id}` form, other
    // spelling) must be followed.
    for i in 0..101 {
        f.create_draft_release(&r, &format!("t{i}"), "n", "")
            .unwrap();
    }
    assert_eq!(f.list_releases(&r).unwrap().len(), 101);
    let d = f.create_draft_release(&r, "up", "up", "").unwrap();
    let a = f.upload_asset(&r, d.id, "a.bin", b"payload").unwrap();
    assert_eq!(f.download_asset(&r, d.id, &a).unwrap(), b"payload");
}

#[test]
fn enterprise_uploads_go_to_the_upload_path_whatever_the_spelling_of_the_host() {
    // GHE serves uploads on the API host under /api/uploads. With `forge.github.upload_url`
    // spelled differently from the `upload_url` template, uploads used to go through the API
    // client as /api/v3/api/uploads/… (404).
    let fake = FakeGithub::start_with(
        FakeOptions::default()
            .enterprise()
            .with_token(TOKEN)
            .with_url_host("localhost"),
    );
    fake.create_repo("scs/cluster-stacks", "main", &[("README.md", b"# s\n")]);
    let port = fake.addr().port();
    let f = forge(
        format!("http://localhost:{port}/api/v3"),
        format!("http://LOCALHOST:{port}"),
    );
    let r = RepoRef::parse("scs/cluster-stacks").unwrap();
    let d = f.create_draft_release(&r, "t", "t", "").unwrap();
    let a = f.upload_asset(&r, d.id, "a.bin", b"payload").unwrap();
    assert_eq!(a.size, 7);
    assert_eq!(f.download_asset(&r, d.id, &a).unwrap(), b"payload");
}
