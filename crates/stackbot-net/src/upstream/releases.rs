//! Paging through the GitHub releases list of Kubernetes over the one HTTP client; what is kept
//! of each release and how it is parsed is `stackbot_core::upstream::kubernetes`.

use crate::net::next_link;
use crate::upstream::http::{GITHUB_JSON, HttpClient, HttpError};
use crate::upstream::kubernetes::{ApiRelease, MAX_PAGES, describe_body};

/// Fetch every page of `GET {api}/repos/{repo}/releases?per_page=100`, following `Link:
/// rel="next"`, and return one JSON array of the relevant fields. Any failing or malformed
/// page fails the whole list, so the caller falls back to markers instead of using a partial
/// view.
pub fn fetch_releases(http: &HttpClient, api: &str, repo: &str) -> Result<String, String> {
    let mut url = format!(
        "{}/repos/{repo}/releases?per_page=100",
        api.trim_end_matches('/')
    );
    let mut all: Vec<ApiRelease> = Vec::new();
    for _ in 0..MAX_PAGES {
        let resp = http
            .get(&url, Some(GITHUB_JSON))
            .map_err(|e: HttpError| e.to_string())?;
        let page: Vec<ApiRelease> = serde_json::from_str(&resp.body).map_err(|e| {
            format!(
                "GET {}: not a JSON list of releases ({}): {e}",
                http.effective_url(&url),
                describe_body(&resp.body)
            )
        })?;
        all.extend(page);
        match resp.link.as_deref().and_then(next_link) {
            Some(next) => url = next,
            None => return Ok(serde_json::to_string(&all).expect("serializable")),
        }
    }
    Err(format!(
        "GET {url}: more than {MAX_PAGES} pages of releases; refusing to follow further"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_header_next_is_found() {
        let h = r#"<https://api.github.com/x?page=3>; rel="next", <https://api.github.com/x?page=9>; rel="last""#;
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/x?page=3")
        );
        assert_eq!(next_link(r#"<https://a/x?page=1>; rel="prev""#), None);
    }
}
