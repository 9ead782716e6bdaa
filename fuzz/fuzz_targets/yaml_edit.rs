//! The format-preserving tenant-file editor on arbitrary bytes: it may refuse a file, but it
//! never panics, documents it does not edit stay byte-identical, and the edited
//! `spec.versions` re-parses to exactly the intended list.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stackbot::model::StackId;
use stackbot::tenants::edit::{Edit, TenantFile};
use stackbot::tenants::scan::split_documents;

/// The limits a run reads tenant files with (`limits.tenant_files` defaults).
fn limits() -> stackbot::yaml::Limits {
    stackbot::config::LimitsConfig::default().tenant_files()
}

fuzz_target!(|data: &[u8]| {
    let Ok(f) = TenantFile::parse("fuzz.yaml", data, &limits()) else {
        return;
    };
    let stack = StackId::new("openstack", "scs2").unwrap();
    let Ok(docs) = f.cluster_stacks(&stack) else {
        return;
    };
    let text = std::str::from_utf8(data).unwrap();
    for d in docs {
        let mut want = d.versions.clone().unwrap_or_default();
        want.push("v999".to_string());
        let Ok(out) = f.apply(&[Edit::SetVersions {
            doc: d.doc,
            versions: want.clone(),
        }]) else {
            continue;
        };
        let g = TenantFile::parse("fuzz.yaml", out.as_bytes(), &limits()).expect("edited file re-parses");
        let again = g
            .cluster_stacks(&stack)
            .expect("edited file still has its stacks");
        let edited = again
            .iter()
            .find(|x| x.doc == d.doc)
            .expect("edited doc is still there");
        assert_eq!(
            edited.versions.as_ref(),
            Some(&want),
            "edited list is the intended one"
        );
        let (a, b) = (split_documents(text), split_documents(&out));
        assert_eq!(a.len(), b.len(), "document count unchanged");
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            if i != d.doc {
                assert_eq!(&text[x.clone()], &out[y.clone()], "document {i} untouched");
            }
        }
    }
});
