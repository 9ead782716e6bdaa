//! The release marker: one hidden line, `<!-- stackbot:release <tag> <clusterStack hash> -->`,
//! at the end of a release's notes, so in the body of its draft and of its release pull
//! request. It names what a draft or a pull request is *for* without reading any asset: a draft
//! carrying the desired hash is an unfinished release to finish (even before its first asset
//! is uploaded), a closed release pull request carrying it was declined for that content, and a
//! merged one is the evidence that its release is to be published.

const PREFIX: &str = "<!-- stackbot:release ";

/// The hidden first line of the comment the bot leaves on a merged release pull request once
/// its draft (or, with `oci` alone, its push) exists (pull-request mode): from then on the
/// draft is the evidence, and a missing release of that number means a human withdrew it.
pub const PUBLISHED: &str = "<!-- stackbot:published -->";

/// A parsed marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub tag: String,
    /// The clusterStack hash (csctl's cleaned dirhash) of the rendered stack.
    pub hash: String,
}

/// The marker line for `tag` with content `hash`.
pub fn line(tag: &str, hash: &str) -> String {
    format!("{PREFIX}{tag} {hash} -->")
}

/// The last marker in `body`, if any.
pub fn parse(body: &str) -> Option<Marker> {
    let start = body.rfind(PREFIX)? + PREFIX.len();
    let rest = &body[start..];
    let end = rest.find("-->")?;
    let mut words = rest[..end].split_whitespace();
    let (Some(tag), Some(hash), None) = (words.next(), words.next(), words.next()) else {
        return None;
    };
    Some(Marker {
        tag: tag.to_string(),
        hash: hash.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_round_trips_and_the_last_one_counts() {
        let body = format!(
            "## notes\n{}\nquoted: {}\n",
            line("a-b-1-2-v1", "old"),
            line("a-b-1-2-v2", "abc")
        );
        let m = parse(&body).unwrap();
        assert_eq!((m.tag.as_str(), m.hash.as_str()), ("a-b-1-2-v2", "abc"));
        assert_eq!(parse("no marker"), None);
        assert_eq!(parse("<!-- stackbot:release only-one -->"), None);
    }
}
