//! Checks csctl leaves to Helm or CSO, which then fail late and obscurely.

/// Whether Helm (Masterminds semver v3.3 `NewVersion`, the lenient parser behind `helm
/// package` and chart loading) accepts `v` as a chart version. Returns why not.
///
/// Grammar: `v?MAJOR(.MINOR)?(.PATCH)?(-PRE)?(+BUILD)?`, numbers without leading zeros and
/// within `u64`; prerelease identifiers are `[0-9A-Za-z-]+` and purely numeric ones have no
/// leading zero (so `v0-sha.0123456`, a possible hash-mode version, is rejected).
pub fn helm_version(v: &str) -> Result<(), String> {
    let err = |why: &str| Err(format!("`{v}` is not a version Helm accepts: {why}"));
    let rest = v.strip_prefix('v').unwrap_or(v);
    let (rest, build) = match rest.split_once('+') {
        Some((a, b)) => (a, Some(b)),
        None => (rest, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (rest, None),
    };
    let nums: Vec<&str> = core.split('.').collect();
    if nums.len() > 3 {
        return err("more than three numeric parts");
    }
    for n in &nums {
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return err("expected `v<major>[.<minor>[.<patch>]]` with numeric parts");
        }
        if n.len() > 1 && n.starts_with('0') {
            return err("a numeric part has a leading zero");
        }
        if n.parse::<u64>().is_err() {
            return err("a numeric part is too large");
        }
    }
    let ident_ok =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if let Some(pre) = pre {
        for id in pre.split('.') {
            if !ident_ok(id) {
                return err("prerelease identifiers must be non-empty `[0-9A-Za-z-]`");
            }
            if id.len() > 1 && id.starts_with('0') && id.bytes().all(|b| b.is_ascii_digit()) {
                return err(
                    "a numeric prerelease identifier has a leading zero (choose another version)",
                );
            }
        }
    }
    if let Some(build) = build
        && !build.split('.').all(ident_ok)
    {
        return err("build metadata identifiers must be non-empty `[0-9A-Za-z-]`");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_helm_packages() {
        for v in [
            "v1",
            "v0-sha.azlfam7",
            "v0-sha.1234567",
            "v0-sha.0abcdef",
            "1.18.9",
            "v2.34.3",
            "1.0.0-rc.1+b.2",
            "v0-custom.pr12",
        ] {
            assert!(helm_version(v).is_ok(), "{v}");
        }
    }

    #[test]
    fn rejects_what_helm_rejects() {
        for v in [
            "v0-sha.0123456",
            "v01",
            "1.2.3.4",
            "",
            "v",
            "x1",
            "v1-a_b",
            "v1-",
            "1..2",
            "v1+",
        ] {
            assert!(helm_version(v).is_err(), "{v}");
        }
    }
}
