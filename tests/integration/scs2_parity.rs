//! The shipped scs2 ClusterClass offers what the SCS `scs2` stack offers: every variable with
//! the same name and schema, every patch touching the same fields, the same cluster-addon
//! stages and values. Both charts are rendered with Helm semantics and their patches applied
//! as CAPI's topology controller applies them (see `support/helm.rs`, `support/capi.rs` and
//! `support/gotemplate.rs` for what is simulated).

use crate::support::capi;
use crate::support::helm;
use crate::support::shared;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

const RELEASE: &str = "openstack-scs2-1-34";
const KUBERNETES: &str = "v1.34.7";

fn ours_dir() -> PathBuf {
    crate::support::root().join("cluster-stacks/openstack/scs2/1-34")
}

fn reference_dir() -> PathBuf {
    shared::reference_stack("a931cdb", "openstack", "scs2")
}

/// (ClusterClass, the other templates) of the cluster-class chart in `stack`.
fn chart(stack: &Path) -> (Value, Vec<Value>) {
    let manifests = helm::template(&stack.join("cluster-class"), RELEASE, "v1")
        .unwrap_or_else(|e| panic!("{}: {e}", stack.display()));
    let mut class = None;
    let mut rest = Vec::new();
    for m in manifests {
        if m.object["kind"] == "ClusterClass" {
            assert!(class.is_none(), "one ClusterClass");
            class = Some(m.object);
        } else {
            rest.push(m.object);
        }
    }
    (class.expect("a ClusterClass"), rest)
}

fn names(class: &Value, what: &str) -> Vec<String> {
    class["spec"][what]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect()
}

/// A schema without `description`s (documentation, not behaviour).
fn behaviour(schema: &Value) -> Value {
    fn strip(v: &Value, in_properties: bool) -> Value {
        match v {
            Value::Object(o) => Value::Object(
                o.iter()
                    .filter(|(k, _)| in_properties || k.as_str() != "description")
                    .map(|(k, v)| (k.clone(), strip(v, k == "properties" && !in_properties)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| strip(x, false)).collect()),
            other => other.clone(),
        }
    }
    strip(schema, false)
}

fn by_name<'a>(class: &'a Value, what: &str, name: &str) -> &'a Value {
    class["spec"][what]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap()
}

#[test]
fn variables_and_patches_match_the_scs2_reference() {
    let (ours, _) = chart(&ours_dir());
    let (reference, _) = chart(&reference_dir());
    let distinct = |c: &Value| -> BTreeSet<String> {
        names(c, "variables")
            .into_iter()
            .chain(names(c, "patches"))
            .collect()
    };
    let (o, r) = (distinct(&ours), distinct(&reference));
    let missing: Vec<&String> = r.difference(&o).collect();
    let extra: Vec<&String> = o.difference(&r).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "variable/patch names: missing {missing:?}, not in the reference {extra:?}"
    );
    assert_eq!(r.len(), 32, "the reference at a931cdb defines 32 names");

    // Variables: same names, `required` and schema (type, default, enum, format, minimum,
    // items, properties, example, …); only the descriptions are ours.
    let (ov, rv) = (names(&ours, "variables"), names(&reference, "variables"));
    assert_eq!(
        ov.iter().collect::<BTreeSet<_>>(),
        rv.iter().collect::<BTreeSet<_>>()
    );
    let mut differing = Vec::new();
    for name in &rv {
        let (a, b) = (
            by_name(&ours, "variables", name),
            by_name(&reference, "variables", name),
        );
        if a["required"] != b["required"]
            || behaviour(&a["schema"]["openAPIV3Schema"])
                != behaviour(&b["schema"]["openAPIV3Schema"])
        {
            differing.push(format!(
                "{name}:\n  ours      {}\n  reference {}",
                behaviour(&a["schema"]),
                behaviour(&b["schema"])
            ));
        }
        assert!(
            a["schema"]["openAPIV3Schema"]["description"].is_string()
                || a["schema"]["openAPIV3Schema"]["properties"].is_object(),
            "{name} is documented"
        );
    }
    assert!(
        differing.is_empty(),
        "schemas differ:\n{}",
        differing.join("\n")
    );

    // Patches: same order (later patches win on shared fields), same selectors, same
    // operations on the same paths. One deliberate difference: our oidcConfig patch creates
    // `apiServer.extraArgs` first, without which its `add`s fail (the reference's do).
    assert_eq!(names(&ours, "patches"), names(&reference, "patches"));
    let extra_args =
        "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/apiServer/extraArgs";
    for name in names(&reference, "patches") {
        let (a, b) = (
            by_name(&ours, "patches", &name),
            by_name(&reference, "patches", &name),
        );
        assert_eq!(
            a["enabledIf"].is_null(),
            b["enabledIf"].is_null(),
            "{name}: enabledIf"
        );
        let defs = |p: &Value| -> Vec<(Value, Vec<(String, String)>)> {
            p["definitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    let ops = d["jsonPatches"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|o| {
                            (
                                o["op"].as_str().unwrap().to_string(),
                                o["path"].as_str().unwrap().to_string(),
                            )
                        })
                        .filter(|(op, path)| {
                            !(name == "oidcConfig" && op == "add" && path == extra_args)
                        })
                        .collect();
                    (d["selector"].clone(), ops)
                })
                .collect()
        };
        assert_eq!(defs(a), defs(b), "patch {name}");
    }
}

/// A Cluster setting every variable of our class to a non-default value.
fn every_variable() -> Map<String, Value> {
    let v = json!({
        "imageName": "my-image",
        "imageIsOrc": true,
        "imageAddVersion": true,
        "disableAPIServerFloatingIP": true,
        "networkExternalID": "ebfe5546-f09f-4f42-ab54-094e457d42ec",
        "networkMTU": 1450,
        "dnsNameservers": ["1.1.1.1", "8.8.8.8"],
        "nodeCIDR": "10.9.0.0/20",
        "controlPlaneFlavor": "SCS-4V-8-50",
        "controlPlaneRootDisk": 30,
        "controlPlaneServerGroupID": "3adf4e92-bb33-4e44-8ad3-afda9dfe8ec3",
        "controlPlaneAvailabilityZones": ["az1", "az2"],
        "controlPlaneOmitAvailabilityZone": true,
        "workerFlavor": "SCS-8V-16",
        "workerRootDisk": 40,
        "workerServerGroupID": "869fe071-1e56-46a9-9166-47c9f228e297",
        "workerAdditionalBlockDevices": [
            {"name": "data", "sizeGiB": 100, "type": "ssd"},
            {"name": "logs"}
        ],
        "sshKeyName": "ops",
        "securityGroups": ["sg-all"],
        "securityGroupIDs": ["9ae2f488-30a3-4629-bd51-07acb8eb4278"],
        "workerSecurityGroups": ["sg-workers"],
        "workerSecurityGroupIDs": ["0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"],
        "identityRef": {"name": "creds", "cloudName": "prod"},
        "certSANs": ["api.example.org"],
        "apiServerLoadBalancer": "octavia-amphora",
        "apiServerLoadBalancerOctaviaAmphoraAllowedCIDRs": ["192.0.2.0/24"],
        "oidcConfig": {
            "clientID": "kubectl",
            "issuerURL": "https://issuer.example.org",
            "usernameClaim": "email",
            "groupsClaim": "roles",
            "usernamePrefix": "o:",
            "groupsPrefix": "g:"
        }
    });
    v.as_object().unwrap().clone()
}

fn topology(variables: Map<String, Value>) -> capi::Topology {
    capi::Topology {
        cluster_name: "c1".into(),
        namespace: "cluster".into(),
        version: KUBERNETES.into(),
        class: format!("{RELEASE}-v1"),
        variables,
        machine_deployments: vec![("md-0".into(), "default-worker".into())],
    }
}

fn patched(stack: &Path, variables: Map<String, Value>) -> Result<Vec<capi::Item>, String> {
    let (class, templates) = chart(stack);
    capi::apply(&class, &templates, &topology(variables))
}

fn item<'a>(items: &'a [capi::Item], role: &str) -> &'a Value {
    &items.iter().find(|i| i.role == role).unwrap().object["spec"]["template"]["spec"]
}

#[test]
fn a_cluster_setting_every_variable_gets_every_field_patched() {
    let all = every_variable();
    let (class, _) = chart(&ours_dir());
    let defined: BTreeSet<String> = names(&class, "variables").into_iter().collect();
    assert_eq!(
        defined,
        all.keys().cloned().collect::<BTreeSet<_>>(),
        "the test Cluster sets every variable"
    );
    let items = patched(&ours_dir(), all.clone()).unwrap();

    let infra = item(&items, "infrastructureCluster");
    assert_eq!(
        infra["apiServerLoadBalancer"],
        json!({"enabled": true, "provider": "amphora", "allowedCIDRs": ["192.0.2.0/24"]})
    );
    assert_eq!(
        infra["externalNetwork"],
        json!({"id": "ebfe5546-f09f-4f42-ab54-094e457d42ec"})
    );
    assert_eq!(infra["networkMTU"], 1450);
    assert_eq!(
        infra["controlPlaneAvailabilityZones"],
        json!(["az1", "az2"])
    );
    assert_eq!(infra["controlPlaneOmitAvailabilityZone"], true);
    assert_eq!(
        infra["identityRef"],
        json!({"name": "creds", "cloudName": "prod"})
    );
    assert_eq!(
        infra["managedSubnets"],
        json!([{"cidr": "10.9.0.0/20", "dnsNameservers": ["1.1.1.1", "8.8.8.8"]}])
    );
    assert_eq!(infra["disableAPIServerFloatingIP"], true);
    assert_eq!(
        infra["managedSecurityGroups"]["allNodesSecurityGroupRules"]
            .as_array()
            .unwrap()
            .len(),
        3,
        "the Cilium rules are not touched"
    );

    let cp = item(&items, "controlPlaneMachine");
    assert_eq!(
        cp["image"],
        json!({"imageRef": {"name": "my-image-v1.34.7"}})
    );
    assert_eq!(cp["flavor"], "SCS-4V-8-50");
    assert_eq!(cp["rootVolume"], json!({"sizeGiB": 30}));
    assert_eq!(
        cp["serverGroup"],
        json!({"id": "3adf4e92-bb33-4e44-8ad3-afda9dfe8ec3"})
    );
    // securityGroupIDs is applied after securityGroups and wins.
    assert_eq!(
        cp["securityGroups"],
        json!([{"id": "9ae2f488-30a3-4629-bd51-07acb8eb4278"}])
    );
    assert_eq!(cp["sshKeyName"], "ops");
    assert!(cp["additionalBlockDevices"].is_null(), "workers only");

    let w = item(&items, "md-0/infrastructure");
    assert_eq!(
        w["image"],
        json!({"imageRef": {"name": "my-image-v1.34.7"}})
    );
    assert_eq!(w["flavor"], "SCS-8V-16");
    assert_eq!(w["rootVolume"], json!({"sizeGiB": 40}));
    assert_eq!(
        w["serverGroup"],
        json!({"id": "869fe071-1e56-46a9-9166-47c9f228e297"})
    );
    assert_eq!(
        w["additionalBlockDevices"],
        json!([
            {"name": "data", "sizeGiB": 100, "storage": {"type": "Volume", "volume": {"type": "ssd"}}},
            // Item defaults from the schema: 20 GiB of the cloud's default volume type.
            {"name": "logs", "sizeGiB": 20, "storage": {"type": "Volume", "volume": {"type": "__DEFAULT__"}}}
        ])
    );
    // The worker-only IDs are applied last and win.
    assert_eq!(
        w["securityGroups"],
        json!([{"id": "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}])
    );
    assert_eq!(w["sshKeyName"], "ops");

    let kcp =
        &item(&items, "controlPlane")["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"];
    assert_eq!(kcp["certSANs"], json!(["api.example.org"]));
    assert_eq!(
        kcp["extraArgs"],
        json!({
            "oidc-client-id": "kubectl",
            "oidc-issuer-url": "https://issuer.example.org",
            "oidc-username-claim": "email",
            "oidc-groups-claim": "roles",
            "oidc-username-prefix": "o:",
            "oidc-groups-prefix": "g:"
        })
    );

    // Names instead of IDs, Glance lookup without the version suffix, the OVN balancer.
    let mut v = every_variable();
    for k in ["securityGroupIDs", "workerSecurityGroupIDs"] {
        v.remove(k);
    }
    v.insert("imageIsOrc".into(), json!(false));
    v.insert("imageAddVersion".into(), json!(false));
    v.insert("apiServerLoadBalancer".into(), json!("octavia-ovn"));
    let items = patched(&ours_dir(), v).unwrap();
    assert_eq!(
        item(&items, "controlPlaneMachine")["securityGroups"],
        json!([{"filter": {"name": "sg-all"}}])
    );
    assert_eq!(
        item(&items, "md-0/infrastructure")["securityGroups"],
        json!([{"filter": {"name": "sg-workers"}}])
    );
    assert_eq!(
        item(&items, "md-0/infrastructure")["image"],
        json!({"filter": {"name": "my-image"}})
    );
    assert_eq!(
        item(&items, "infrastructureCluster")["apiServerLoadBalancer"],
        json!({"enabled": true, "provider": "ovn"}),
        "allowed CIDRs only apply to amphora"
    );
}

#[test]
fn defaults_give_the_release_image_and_the_scs_flavors() {
    let items = patched(&ours_dir(), Map::new()).unwrap();
    let cp = item(&items, "controlPlaneMachine");
    assert_eq!(
        cp["image"],
        json!({"filter": {"name": "ubuntu-capi-image-v1.34.7"}}),
        "the node image the release's image.yaml and kubernetes.yaml name"
    );
    let image_yaml = std::fs::read_to_string(ours_dir().join("image.yaml")).unwrap();
    assert!(image_yaml.contains("name: \"ubuntu-capi-image-v1.34.7\""));
    assert_eq!(cp["flavor"], "SCS-2V-4");
    assert_eq!(cp["rootVolume"], json!({"sizeGiB": 50}));
    assert_eq!(item(&items, "md-0/infrastructure")["flavor"], "SCS-4V-8");
    let infra = item(&items, "infrastructureCluster");
    assert_eq!(
        infra["identityRef"],
        json!({"name": "openstack", "cloudName": "openstack"})
    );
    assert_eq!(
        infra["apiServerLoadBalancer"],
        json!({"enabled": true, "provider": "ovn"})
    );
    assert_eq!(
        infra["managedSubnets"],
        json!([{"cidr": "10.8.0.0/20", "dnsNameservers": ["9.9.9.9", "149.112.112.112"]}])
    );
    assert!(infra["externalNetwork"].is_null() && cp["serverGroup"].is_null());
    let kcp =
        &item(&items, "controlPlane")["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"];
    assert!(kcp.get("extraArgs").is_none() && kcp.get("certSANs").is_none());
}

/// Objects as CAPI and the API server see them: empty maps, lists and nulls are the same as
/// absent. The kube-proxy patch script is ours (same steps, other words), so its text is not
/// compared.
fn normalized(items: &[capi::Item]) -> Vec<(String, Value)> {
    fn norm(v: &Value) -> Option<Value> {
        match v {
            Value::Null => None,
            Value::Object(o) => {
                let m: Map<String, Value> = o
                    .iter()
                    .filter_map(|(k, v)| norm(v).map(|v| (k.clone(), v)))
                    .collect();
                (!m.is_empty()).then_some(Value::Object(m))
            }
            Value::Array(a) => {
                let v: Vec<Value> = a.iter().filter_map(norm).collect();
                (!v.is_empty()).then_some(Value::Array(v))
            }
            other => Some(other.clone()),
        }
    }
    items
        .iter()
        .map(|i| {
            let mut o = i.object.clone();
            if let Some(files) =
                o["spec"]["template"]["spec"]["kubeadmConfigSpec"]["files"].as_array_mut()
            {
                for f in files
                    .iter_mut()
                    .filter(|f| f["path"] == "/etc/kube-proxy-patch.sh")
                {
                    f["content"] = json!("<script>");
                }
            }
            (i.role.clone(), norm(&o).unwrap_or(Value::Null))
        })
        .collect()
}

#[test]
fn the_patched_templates_equal_the_references_for_the_same_cluster() {
    let mut without_oidc = every_variable();
    without_oidc.remove("oidcConfig");
    let mut names_not_ids = without_oidc.clone();
    for k in ["securityGroupIDs", "workerSecurityGroupIDs"] {
        names_not_ids.remove(k);
    }
    names_not_ids.insert("imageIsOrc".into(), json!(false));
    names_not_ids.insert("imageAddVersion".into(), json!(false));
    names_not_ids.insert("apiServerLoadBalancer".into(), json!("octavia-ovn"));
    let none: Map<String, Value> = json!({
        "apiServerLoadBalancer": "none",
        "nodeCIDR": "",
        "controlPlaneRootDisk": 0,
        "workerRootDisk": 0,
        "controlPlaneFlavor": "SCS-2V-4-20s",
        "workerFlavor": "SCS-4V-8-50",
        "workerAdditionalBlockDevices": [],
        "certSANs": ["a.example", "b.example"],
    })
    .as_object()
    .unwrap()
    .clone();
    for (label, vars) in [
        ("defaults", Map::new()),
        ("every variable but oidcConfig", without_oidc),
        ("names, Glance, OVN", names_not_ids),
        ("no load balancer, no network, flavor disks", none),
    ] {
        let ours = normalized(&patched(&ours_dir(), vars.clone()).unwrap());
        let reference = normalized(&patched(&reference_dir(), vars).unwrap());
        assert_eq!(ours.len(), reference.len());
        for ((role, a), (_, b)) in ours.iter().zip(&reference) {
            assert_eq!(a, b, "{label}: {role}\nours:      {a}\nreference: {b}");
        }
    }
}

#[test]
fn the_reference_oidc_patch_fails_where_ours_applies() {
    // JSON patch `add` needs the parent: the reference's control plane template has no
    // `apiServer.extraArgs`, so CAPI (evanphx/json-patch, default options) rejects its
    // oidcConfig patch. Ours creates the map first.
    let mut v = Map::new();
    v.insert(
        "oidcConfig".into(),
        json!({"clientID": "kubectl", "issuerURL": "https://issuer.example.org"}),
    );
    let err = patched(&reference_dir(), v.clone()).unwrap_err();
    assert!(
        err.contains("patch oidcConfig") && err.contains("missing path"),
        "{err}"
    );
    let items = patched(&ours_dir(), v).unwrap();
    let args = &item(&items, "controlPlane")["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"]
        ["extraArgs"];
    // Unset claims and prefixes take the schema defaults.
    assert_eq!(
        *args,
        json!({
            "oidc-client-id": "kubectl",
            "oidc-issuer-url": "https://issuer.example.org",
            "oidc-username-claim": "preferred_username",
            "oidc-groups-claim": "groups",
            "oidc-username-prefix": "oidc:",
            "oidc-groups-prefix": "oidc:"
        })
    );
}

#[test]
fn the_chart_renders_the_classes_and_templates_cso_applies() {
    let (class, templates) = chart(&ours_dir());
    assert_eq!(class["metadata"]["name"], "openstack-scs2-1-34-v1");
    let mut kinds: Vec<String> = templates
        .iter()
        .map(|t| {
            format!(
                "{} {}",
                t["kind"].as_str().unwrap(),
                t["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "KubeadmConfigTemplate openstack-scs2-1-34-v1-default-worker",
            "KubeadmControlPlaneTemplate openstack-scs2-1-34-v1-control-plane",
            "OpenStackClusterTemplate openstack-scs2-1-34-v1-cluster",
            "OpenStackMachineTemplate openstack-scs2-1-34-v1-control-plane",
            "OpenStackMachineTemplate openstack-scs2-1-34-v1-default-worker",
        ]
    );
    // Every template the class references exists (CAPI refuses the class otherwise).
    let (_, reference_templates) = chart(&reference_dir());
    assert_eq!(templates.len(), reference_templates.len());
}

#[test]
fn the_cluster_addon_stages_and_values_are_the_references() {
    let read = |dir: &Path, p: &str| -> Value {
        helm::yaml_docs(&std::fs::read_to_string(dir.join(p)).unwrap())
            .unwrap()
            .into_iter()
            .next()
            .unwrap_or(Value::Null)
    };
    let (ours, reference) = (ours_dir(), reference_dir());
    assert_eq!(
        read(&ours, "clusteraddon.yaml"),
        read(&reference, "clusteraddon.yaml"),
        "same stages, same order, same hooks"
    );
    for stage in ["ccm", "cni", "csi", "metrics-server"] {
        assert_eq!(
            read(&ours, &format!("cluster-addon/{stage}/values.yaml")),
            read(&reference, &format!("cluster-addon/{stage}/values.yaml")),
            "{stage}/values.yaml"
        );
        let overwrite = format!("cluster-addon/{stage}/overwrite.yaml");
        assert_eq!(
            ours.join(&overwrite).exists(),
            reference.join(&overwrite).exists(),
            "{overwrite}"
        );
        if reference.join(&overwrite).exists() {
            // CSO renders `values` as a Go template (not YAML until rendered): compare it.
            let inner = |d: &Path| read(d, &overwrite)["values"].as_str().unwrap().to_string();
            assert_eq!(inner(&ours), inner(&reference), "{overwrite}");
        }
        let dep = |d: &Path| {
            let c = read(d, &format!("cluster-addon/{stage}/Chart.yaml"));
            let d = &c["dependencies"][0];
            (
                d["name"].clone(),
                d["alias"].clone(),
                d["repository"].clone(),
                d["version"]
                    .as_str()
                    .map(str::to_string)
                    .or_else(|| d["version"].as_f64().map(|f| f.to_string())),
            )
        };
        assert_eq!(dep(&ours), dep(&reference), "{stage} dependency");
    }
}

#[test]
fn every_variable_is_documented_with_its_type_and_default() {
    let doc =
        std::fs::read_to_string(crate::support::root().join("docs/cluster-class-variables.md"))
            .unwrap();
    let rows: Vec<Vec<String>> = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    let (class, _) = chart(&ours_dir());
    let mut documented = BTreeSet::new();
    for row in &rows {
        let name = row[0].trim_matches('`');
        if !name.contains('.') {
            documented.insert(name.to_string());
        }
    }
    let defined: BTreeSet<String> = names(&class, "variables").into_iter().collect();
    assert_eq!(
        documented, defined,
        "docs/cluster-class-variables.md lists every variable once"
    );
    for name in &defined {
        let row = rows.iter().find(|r| r[0] == format!("`{name}`")).unwrap();
        let schema = &by_name(&class, "variables", name)["schema"]["openAPIV3Schema"];
        let ty = schema["type"].as_str().unwrap();
        assert!(
            row[1].starts_with(ty),
            "{name}: type column `{}` is not {ty}",
            row[1]
        );
        match &schema["default"] {
            Value::String(s) if s.is_empty() => assert_eq!(row[2], "`\"\"`", "{name}"),
            Value::String(s) => assert_eq!(row[2], format!("`{s}`"), "{name}"),
            Value::Bool(_) | Value::Number(_) => {
                assert_eq!(row[2], format!("`{}`", schema["default"]), "{name}")
            }
            Value::Null => assert!(row[2].is_empty(), "{name} has no default"),
            _ => assert!(!row[2].is_empty(), "{name}: default documented"),
        }
    }
}
