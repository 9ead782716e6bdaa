//! csctl's `<< .Key >>` substitution (`valyala/fasttemplate`, §2.4), byte for byte.
//!
//! The delimiters include the spaces (`"<< "` and `" >>"`), the tag text is matched
//! verbatim (no trimming), unknown tags become empty, and a start tag without a later end
//! tag is an error. It runs over every file, binary or not, exactly like csctl, so a stack
//! that packages here packages identically there.

use super::{PackageError, Versions};

const START: &[u8] = b"<< ";
const END: &[u8] = b" >>";

/// The values csctl offers, in dot form.
pub fn values(v: &Versions) -> [(&'static str, String); 3] {
    [
        (".ClusterClassVersion", v.cluster_stack.dot()),
        (".ClusterAddonVersion", v.cluster_addon.dot()),
        (".NodeImageVersion", v.node_image.dot()),
    ]
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Substitute `input` (the content of stack file `path`, used in errors). Returns the input
/// unchanged (no copy of the logic's result differs) when it holds no start tag.
pub fn render(path: &str, input: &[u8], vals: &[(&str, String)]) -> Result<Vec<u8>, PackageError> {
    let mut out = Vec::with_capacity(input.len());
    let mut rest = input;
    while let Some(n) = find(rest, START) {
        out.extend_from_slice(&rest[..n]);
        let after = &rest[n + START.len()..];
        let Some(e) = find(after, END) else {
            let line = input[..input.len() - rest.len() + n]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            return Err(PackageError::invalid(
                format!("{path}:{line}"),
                "`<< ` starts a csctl template tag that is never closed by ` >>`: close it or write `<<` without the trailing space",
            ));
        };
        let tag = &after[..e];
        if let Some((_, v)) = vals.iter().find(|(k, _)| k.as_bytes() == tag) {
            out.extend_from_slice(v.as_bytes());
        }
        rest = &after[e + END.len()..];
    }
    out.extend_from_slice(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StackVersion;

    fn vals() -> Vec<(&'static str, String)> {
        values(&Versions {
            cluster_stack: StackVersion::stable(3),
            cluster_addon: StackVersion::stable(2),
            node_image: StackVersion::hash_mode("abcdefgh"),
        })
        .to_vec()
    }

    #[test]
    fn substitutes_known_keys_in_dot_form() {
        let out = render(
            "f",
            b"cc: << .ClusterClassVersion >>, ca: << .ClusterAddonVersion >>, ni: << .NodeImageVersion >>",
            &vals(),
        )
        .unwrap();
        assert_eq!(out, b"cc: v3, ca: v2, ni: v0-sha.abcdefg");
    }

    #[test]
    fn unknown_and_untrimmed_tags_render_empty() {
        let out = render("f", b"[<< .Nope >>][<<  .ClusterClassVersion >>]", &vals()).unwrap();
        assert_eq!(out, b"[][]");
    }

    #[test]
    fn text_without_the_exact_delimiters_is_untouched() {
        let src = b"a <<b>> {{ .Values.x }} <<.ClusterClassVersion>> \xff\x00";
        assert_eq!(render("f", src, &vals()).unwrap(), src.to_vec());
    }

    #[test]
    fn unterminated_tag_is_an_error_with_file_and_line() {
        let e = render("cluster-class/values.yaml", b"a\nb: << .X\n", &vals()).unwrap_err();
        assert!(e.to_string().contains("cluster-class/values.yaml:2"), "{e}");
    }
}
