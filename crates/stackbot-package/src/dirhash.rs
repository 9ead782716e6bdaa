//! csctl's release hashes (`csctl: pkg/cshash/hash.go`, `golang.org/x/mod/sumdb/dirhash`).
//!
//! The clusterStack hash decides the hash-mode version and whether a stable release is
//! needed at all, so it must equal csctl's bit for bit: same file set (every file, dotfiles
//! included), same byte-order sort, same `h1:` line format, same "cleaning".

use base64::Engine;
use sha2::{Digest, Sha256};

use super::PackageError;
use crate::FileTree;

/// The four hashes csctl writes to `hashes.json`, already cleaned (see [`clean`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReleaseHashes {
    pub cluster_stack: String,
    pub cluster_addon_dir: String,
    pub cluster_addon_values: String,
    /// Only set when the stack has a `node-image/` (singular) directory, as in csctl.
    pub node_image_dir: Option<String>,
}

/// dirhash `Hash1` over `(path, bytes)` pairs already in byte order: sha256 over lines
/// `"<hex sha256>  <path>\n"`, base64 (standard, padded), prefixed `h1:`.
pub fn hash1<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut summary = Sha256::new();
    for (path, bytes) in files {
        let digest = Sha256::digest(bytes);
        summary.update(hex::encode(digest).as_bytes());
        summary.update(b"  ");
        summary.update(path.as_bytes());
        summary.update(b"\n");
    }
    format!(
        "h1:{}",
        base64::engine::general_purpose::STANDARD.encode(summary.finalize())
    )
}

/// csctl's `clean`: strip `h1:`, drop `/`, `=` and `+`, lowercase. Not reversible, and not
/// hex: it is what csctl compares and what the `v0-sha.<7>` version is cut from.
pub fn clean(h: &str) -> String {
    h.strip_prefix("h1:")
        .unwrap_or(h)
        .chars()
        .filter(|c| !matches!(c, '/' | '=' | '+'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// dirhash of the subtree under `dir/` (paths relative to it), or `None` when no file lies
/// below it (csctl only hashes directories that exist; an empty one cannot be in a FileTree).
fn subdir_hash(tree: &FileTree, dir: &str) -> Option<String> {
    let prefix = format!("{dir}/");
    let mut files = tree
        .range(prefix.clone()..)
        .take_while(|(k, _)| k.starts_with(&prefix))
        .map(|(k, v)| (&k[prefix.len()..], v.as_slice()))
        .peekable();
    files.peek()?;
    Some(clean(&hash1(files)))
}

/// The release hashes of a stack tree, as csctl computes them before packaging (on the
/// un-templated source). Pure.
pub fn hashes(tree: &FileTree) -> ReleaseHashes {
    let all = tree.iter().map(|(k, v)| (k.as_str(), v.as_slice()));
    ReleaseHashes {
        cluster_stack: clean(&hash1(all)),
        cluster_addon_dir: subdir_hash(tree, "cluster-addon").unwrap_or_default(),
        cluster_addon_values: tree
            .get("cluster-addon-values.yaml")
            .map(|b| clean(&base64::engine::general_purpose::STANDARD.encode(Sha256::digest(b))))
            .unwrap_or_default(),
        node_image_dir: subdir_hash(tree, "node-image"),
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings always serialise")
}

impl ReleaseHashes {
    /// `hashes.json` exactly as csctl writes it (`json.MarshalIndent(v, "", "  ")`): fixed
    /// field order, `clusterAddonValues` always present, `nodeImageDir` omitted when empty,
    /// no trailing newline.
    pub fn to_json(&self) -> String {
        let mut fields = vec![
            ("clusterStack", &self.cluster_stack),
            ("clusterAddonDir", &self.cluster_addon_dir),
            ("clusterAddonValues", &self.cluster_addon_values),
        ];
        if let Some(n) = self.node_image_dir.as_ref().filter(|n| !n.is_empty()) {
            fields.push(("nodeImageDir", n));
        }
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("  {}: {}", json_str(k), json_str(v)))
            .collect();
        format!("{{\n{}\n}}", body.join(",\n"))
    }

    /// Parse a `hashes.json` from an earlier release (csctl's or ours). Missing fields are
    /// empty, as Go's `json.Unmarshal` leaves them.
    pub fn parse_json(text: &str) -> Result<Self, PackageError> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Raw {
            #[serde(default)]
            cluster_stack: String,
            #[serde(default)]
            cluster_addon_dir: String,
            #[serde(default)]
            cluster_addon_values: String,
            #[serde(default)]
            node_image_dir: Option<String>,
        }
        let raw: Raw = serde_json::from_str(text)
            .map_err(|e| PackageError::invalid("hashes.json", format!("is not valid: {e}")))?;
        Ok(ReleaseHashes {
            cluster_stack: raw.cluster_stack,
            cluster_addon_dir: raw.cluster_addon_dir,
            cluster_addon_values: raw.cluster_addon_values,
            node_image_dir: raw.node_image_dir.filter(|s| !s.is_empty()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash1_matches_go_dirhash_for_a_known_input() {
        // echo -n "hello" | sha256sum => 2cf24d...; one line "2cf2...  a\n".
        let h = hash1([("a", b"hello".as_slice())]);
        let line = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824  a\n";
        let expected = format!(
            "h1:{}",
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(line))
        );
        assert_eq!(h, expected);
    }

    #[test]
    fn clean_strips_prefix_and_symbols_and_lowercases() {
        assert_eq!(clean("h1:Ab+c/D=="), "abcd");
    }

    #[test]
    fn paths_sort_by_bytes_uppercase_first() {
        let mut t = FileTree::new();
        t.insert("b".into(), b"1".to_vec());
        t.insert("B".into(), b"2".to_vec());
        let expected = hash1([("B", b"2".as_slice()), ("b", b"1".as_slice())]);
        assert_eq!(hashes(&t).cluster_stack, clean(&expected));
    }

    #[test]
    fn subdir_hashes_are_relative_to_the_subdir() {
        let mut t = FileTree::new();
        t.insert("cluster-addon/x".into(), b"1".to_vec());
        t.insert("cluster-addon-values.yaml".into(), b"v".to_vec());
        t.insert("cluster-addonx".into(), b"no".to_vec());
        let h = hashes(&t);
        assert_eq!(h.cluster_addon_dir, clean(&hash1([("x", b"1".as_slice())])));
        assert!(!h.cluster_addon_values.is_empty());
        assert_eq!(h.node_image_dir, None);
    }

    #[test]
    fn json_is_csctl_shaped_and_round_trips() {
        let h = ReleaseHashes {
            cluster_stack: "abc".into(),
            cluster_addon_dir: "def".into(),
            cluster_addon_values: String::new(),
            node_image_dir: None,
        };
        assert_eq!(
            h.to_json(),
            "{\n  \"clusterStack\": \"abc\",\n  \"clusterAddonDir\": \"def\",\n  \"clusterAddonValues\": \"\"\n}"
        );
        assert_eq!(ReleaseHashes::parse_json(&h.to_json()).unwrap(), h);
        let n = ReleaseHashes {
            node_image_dir: Some("n".into()),
            ..h
        };
        assert!(n.to_json().ends_with(",\n  \"nodeImageDir\": \"n\"\n}"));
        assert_eq!(ReleaseHashes::parse_json(&n.to_json()).unwrap(), n);
    }
}
