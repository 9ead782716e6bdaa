//! OSISM node images: the `<image>.CHECKSUM` file next to each image is the proof the image
//! exists and the only source of its sha256.
//!
//! A release set must never carry a checksum that was not read from upstream and checked, so
//! parsing is strict: exactly `sha256sum` output for the expected file name.

/// The checksum URL of an image URL.
pub fn checksum_url(image_url: &str) -> String {
    format!("{image_url}.CHECKSUM")
}

/// The last path segment of a URL.
pub fn file_name(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or(url)
}

/// Parse `sha256sum` output (`<64 lowercase hex>  <file>`) and require that it names
/// `expected_file`. Returns the sha256.
pub fn parse_checksum(body: &str, expected_file: &str) -> Result<String, String> {
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    let [line] = lines.as_slice() else {
        return Err(format!(
            "expected one line `<sha256>  {expected_file}`, found {} lines",
            lines.len()
        ));
    };
    let mut parts = line.split_whitespace();
    let (Some(hash), Some(file), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!(
            "expected `<sha256>  {expected_file}`, found `{}`",
            line.chars().take(100).collect::<String>()
        ));
    };
    if !crate::model::is_sha256(hash) {
        return Err(format!(
            "`{}` is not a sha256 (64 lowercase hex characters)",
            hash.chars().take(80).collect::<String>()
        ));
    }
    // `sha256sum -b` marks binary mode with `*` before the name.
    let file = file.strip_prefix('*').unwrap_or(file);
    if file != expected_file {
        return Err(format!(
            "checksum is for `{file}`, expected `{expected_file}`"
        ));
    }
    Ok(hash.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "f7bf12297833cca14de6d24081c8a01e99143651e4c01431b911375300550fe0";

    #[test]
    fn accepts_sha256sum_output_for_the_expected_file() {
        let body = format!("{H}  ubuntu-2404-kube-v1.34.7.qcow2\n");
        assert_eq!(
            parse_checksum(&body, "ubuntu-2404-kube-v1.34.7.qcow2").unwrap(),
            H
        );
        let binary = format!("{H} *ubuntu-2404-kube-v1.34.7.qcow2");
        assert!(parse_checksum(&binary, "ubuntu-2404-kube-v1.34.7.qcow2").is_ok());
    }

    #[test]
    fn rejects_wrong_file_uppercase_short_and_html() {
        let f = "ubuntu-2404-kube-v1.34.7.qcow2";
        let wrong = format!("{H}  ubuntu-2404-kube-v1.34.6.qcow2");
        assert!(parse_checksum(&wrong, f).unwrap_err().contains("v1.34.6"));
        let upper = format!("{}  {f}", H.to_uppercase());
        assert!(parse_checksum(&upper, f).is_err());
        assert!(parse_checksum(&format!("{}  {f}", &H[..63]), f).is_err());
        assert!(parse_checksum("<html><body>404</body></html>", f).is_err());
        assert!(parse_checksum(H, f).is_err());
        assert!(parse_checksum("", f).is_err());
    }

    #[test]
    fn file_name_is_the_last_segment() {
        assert_eq!(
            file_name("https://h/osism/a/ubuntu-2404-kube-v1.34.7.qcow2"),
            "ubuntu-2404-kube-v1.34.7.qcow2"
        );
        assert_eq!(
            checksum_url("https://h/a.qcow2"),
            "https://h/a.qcow2.CHECKSUM"
        );
    }
}
