//! Properties of packaging over the real scs2 tree: determinism and hash sensitivity.

use crate::support::shared;

use proptest::prelude::*;
use stackbot::package::{self, VersionSelection};

fn scs2() -> stackbot::model::FileTree {
    package::read_stack_dir(&shared::reference_stack("a931cdb", "openstack", "scs2")).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Packaging is a pure function: twice the same tree, byte-identical files.
    #[test]
    fn packaging_twice_gives_identical_bytes(extra in "[a-z]{1,8}") {
        let mut tree = scs2();
        // Vary the input a little so each case packages a different (valid) tree.
        tree.insert(format!("notes/{extra}.txt"), extra.clone().into_bytes());
        let a = package::package(&tree, &VersionSelection::Hash).unwrap();
        let b = package::package(&tree, &VersionSelection::Hash).unwrap();
        prop_assert_eq!(a.name.to_string(), b.name.to_string());
        prop_assert_eq!(a.files, b.files);
    }

    /// Any single-file change (one byte flipped, appended or the file renamed) changes the
    /// clusterStack hash.
    #[test]
    fn any_single_file_change_changes_the_hash(idx in any::<prop::sample::Index>(), byte in any::<u8>(), how in 0..3u8) {
        let tree = scs2();
        let before = package::hashes(&tree).cluster_stack;
        let keys: Vec<String> = tree.keys().cloned().collect();
        let key = idx.get(&keys).clone();
        let mut changed = tree.clone();
        match how {
            0 => changed.get_mut(&key).unwrap().push(byte),
            1 => {
                let f = changed.get_mut(&key).unwrap();
                if f.is_empty() { f.push(byte) } else { let i = byte as usize % f.len(); f[i] ^= 0x01; }
            }
            _ => {
                let data = changed.remove(&key).unwrap();
                changed.insert(format!("{key}.renamed"), data);
            }
        }
        prop_assert_ne!(package::hashes(&changed).cluster_stack, before);
    }
}
