//! The tenant YAML edit path with the limits on (issue 33): on any bytes, reading a tenant
//! file within small limits never panics; a refusal names its `limits.tenant_files.*`
//! setting; a file that is read holds values no larger than the limits allow (nodes, aliases
//! expanded, and depth, counted on the values `yaml_serde` built: the limits hold by
//! construction); and an edit of it either is refused or re-parses to the intended list.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stackbot::model::{Minor, StackId};
use stackbot::tenants::edit::{Edit, TenantFile};
use stackbot::yaml::Limits;
use yaml_serde::Value;

const LIMITS: Limits = Limits {
    max_bytes: 16 * 1024,
    max_depth: 12,
    max_nodes: 2_000,
    setting: "limits.tenant_files",
};

/// Nodes and depth of a built value (a mapping's keys count as nodes, as in the reader).
fn size(v: &Value, depth: usize) -> (u64, usize) {
    match v {
        Value::Sequence(s) => s.iter().fold((1, depth + 1), |(n, d), x| {
            let (m, e) = size(x, depth + 1);
            (n + m, d.max(e))
        }),
        Value::Mapping(m) => m.iter().fold((1, depth + 1), |(n, d), (k, x)| {
            let (a, e) = size(k, depth + 1);
            let (b, f) = size(x, depth + 1);
            (n + a + b, d.max(e).max(f))
        }),
        Value::Tagged(t) => size(&t.value, depth),
        _ => (1, depth),
    }
}

fuzz_target!(|data: &[u8]| {
    let f = match TenantFile::parse("fuzz.yaml", data, &LIMITS) {
        Ok(f) => f,
        Err(e) => {
            if e.message.contains("over the limit") {
                assert!(e.message.contains("`limits.tenant_files.max_"), "{e}");
            }
            return;
        }
    };
    let (mut nodes, mut depth) = (0, 0);
    for v in &f.values {
        let (n, d) = size(v, 0);
        nodes += n;
        depth = depth.max(d);
    }
    assert!(nodes <= LIMITS.max_nodes, "{nodes} nodes built within {LIMITS:?}");
    assert!(depth <= LIMITS.max_depth, "depth {depth} built within {LIMITS:?}");

    let stack = StackId::new("openstack", "scs2").unwrap();
    let Ok(docs) = f.cluster_stacks(&stack) else {
        return;
    };
    let wider = Limits {
        max_nodes: LIMITS.max_nodes * 2 + 16,
        max_bytes: LIMITS.max_bytes * 2 + 256,
        ..LIMITS
    };
    for d in docs {
        let mut want = d.versions.clone().unwrap_or_default();
        want.push("v999".to_string());
        let set = Edit::SetVersions {
            doc: d.doc,
            versions: want.clone(),
        };
        if let Ok(out) = f.apply(&[set]) {
            let g = TenantFile::parse("fuzz.yaml", out.as_bytes(), &wider)
                .expect("an edited file re-parses within the limits");
            let again = g.cluster_stacks(&stack).expect("its stacks are still there");
            let edited = again.iter().find(|x| x.doc == d.doc).expect("the edited document");
            assert_eq!(edited.versions.as_ref(), Some(&want));
        }
        let next = Minor {
            major: d.minor.major,
            minor: d.minor.minor + 1,
        };
        let add = Edit::AddMinor {
            after_doc: d.doc,
            from: d.minor,
            minor: next,
            versions: vec!["v1".into()],
        };
        if let Ok(out) = f.apply(&[add]) {
            TenantFile::parse("fuzz.yaml", out.as_bytes(), &wider)
                .expect("a file with a minor added re-parses within the limits");
        }
    }
});
