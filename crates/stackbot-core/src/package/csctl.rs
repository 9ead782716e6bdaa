//! `csctl.yaml`, parsed and validated as csctl does (§1), plus the checks csctl forgets.

use super::PackageError;
use crate::model::{KubeVersion, StackId};

const FILE: &str = "csctl.yaml";

/// The parts of `csctl.yaml` packaging needs. Unknown keys are ignored, as in csctl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsctlConfig {
    pub stack: StackId,
    pub kubernetes: KubeVersion,
    /// `config.provider.config` is non-empty: csctl would run the `csctl-<type>` plugin.
    pub has_provider_config: bool,
}

/// The string at `field` (a dotted path, as messages name it); empty when missing or null.
fn field_str(doc: &yaml_serde::Value, field: &str) -> Result<String, PackageError> {
    let path: Vec<&str> = field.split('.').collect();
    match crate::yaml::get(doc, &path) {
        None | Some(yaml_serde::Value::Null) => Ok(String::new()),
        Some(yaml_serde::Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(PackageError::field(FILE, field, "must be a string")),
    }
}

/// Parse `csctl.yaml`, validating in csctl's order (provider type, stack name, kubernetes
/// version) and then rejecting a `-` in provider or name (CSO splits tags on `-`).
pub fn parse(bytes: &[u8]) -> Result<CsctlConfig, PackageError> {
    let doc: yaml_serde::Value = yaml_serde::from_slice(bytes)
        .map_err(|e| PackageError::invalid(FILE, format!("is not valid YAML: {e}")))?;
    let ptype = field_str(&doc, "config.provider.type")?;
    let name = field_str(&doc, "config.clusterStackName")?;
    let kube = field_str(&doc, "config.kubernetesVersion")?;
    if ptype.is_empty() {
        return Err(PackageError::field(
            FILE,
            "config.provider.type",
            "is missing: set it to the provider, e.g. `openstack`",
        ));
    }
    if ptype.len() > 253 || !is_dns_label_like(&ptype) || ptype.contains('-') {
        return Err(PackageError::field(
            FILE,
            "config.provider.type",
            format!(
                "`{ptype}` is invalid: use lowercase letters and digits only (no `-`: CSO splits release tags on `-`)"
            ),
        ));
    }
    if name.is_empty() {
        return Err(PackageError::field(
            FILE,
            "config.clusterStackName",
            "is missing: set it to the stack name, e.g. `scs2`",
        ));
    }
    let kubernetes: KubeVersion = kube.parse().map_err(|_| {
        PackageError::field(
            FILE,
            "config.kubernetesVersion",
            format!("`{kube}` is invalid: expected `v<major>.<minor>.<patch>`, e.g. `v1.34.7`"),
        )
    })?;
    let stack = StackId::new(&ptype, &name).map_err(|_| {
        PackageError::field(
            FILE,
            "config.clusterStackName",
            format!(
                "`{name}` is invalid: use lowercase letters and digits only (no `-`: CSO splits release tags on `-`)"
            ),
        )
    })?;
    let has_provider_config = crate::yaml::get(&doc, &["config", "provider", "config"])
        .and_then(|c| c.as_mapping())
        .is_some_and(|m| !m.is_empty());
    Ok(CsctlConfig {
        stack,
        kubernetes,
        has_provider_config,
    })
}

fn is_dns_label_like(s: &str) -> bool {
    let ok = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && ok(bytes[0])
        && ok(bytes[bytes.len() - 1])
        && bytes.iter().all(|&b| ok(b) || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(ptype: &str, name: &str, kube: &str) -> String {
        format!(
            "apiVersion: csctl.clusterstack.x-k8s.io/v1alpha1\nconfig:\n  kubernetesVersion: {kube}\n  clusterStackName: {name}\n  provider:\n    type: {ptype}\n    apiVersion: x\n"
        )
    }

    #[test]
    fn parses_the_scs2_shape() {
        let c = parse(doc("openstack", "scs2", "v1.34.7").as_bytes()).unwrap();
        assert_eq!(c.stack.to_string(), "openstack/scs2");
        assert_eq!(c.kubernetes.to_string(), "v1.34.7");
        assert!(!c.has_provider_config);
    }

    #[test]
    fn rejects_dashes_and_bad_versions_naming_the_field() {
        let e = parse(doc("open-stack", "scs2", "v1.34.7").as_bytes()).unwrap_err();
        assert!(e.to_string().contains("config.provider.type"), "{e}");
        let e = parse(doc("openstack", "scs-2", "v1.34.7").as_bytes()).unwrap_err();
        assert!(e.to_string().contains("config.clusterStackName"), "{e}");
        for bad in ["v1.34", "1.34.7", "v1.34.7-rc.1", "\"\""] {
            let e = parse(doc("openstack", "scs2", bad).as_bytes()).unwrap_err();
            assert!(
                e.to_string().contains("config.kubernetesVersion"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn detects_provider_config_like_csctl() {
        let y = "config:\n  kubernetesVersion: v1.27.8\n  clusterStackName: ferrol\n  provider:\n    type: openstack\n    config:\n      method: get\n";
        assert!(parse(y.as_bytes()).unwrap().has_provider_config);
    }
}
