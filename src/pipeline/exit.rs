//! From what a run did to the exit code users see: the one mapping, shared by the command line
//! and by the world simulator, so the simulator judges the very code a workflow reacts to.
//!
//! Users script around these codes (docs/operations.md, "Exit codes"): `0` done or nothing to
//! do, `1` transient trouble (the next run finishes the job), `2` input a human must fix
//! (nothing was changed), `3` some tenants failed. When several apply, the worst wins: 2, then
//! 1, then 3.

use std::error::Error as StdError;

pub use crate::error::Class;
use crate::error::{ExitStatus, InvalidInput};
use crate::tenants::{Outcome, TenantReport};

use super::Error;
use super::release::Released;

/// The class of a failed command's error, from its whole chain (outermost first): the
/// greatest class of any link ([`Class`]'s order: a refusal, then input, then transient), so
/// context added on the way up never hides an input underneath and never turns transient
/// trouble into input. The exit code and the hint both follow from it.
pub fn class_of_chain<'a>(chain: impl IntoIterator<Item = &'a (dyn StdError + 'static)>) -> Class {
    chain
        .into_iter()
        .filter_map(class_of)
        .max()
        .unwrap_or(Class::Transient)
}

/// [`class_of_chain`] for a pipeline error and its sources.
pub fn class_of_error(err: &Error) -> Class {
    let first: &(dyn StdError + 'static) = err;
    class_of_chain(std::iter::successors(Some(first), |e| (*e).source()))
}

/// The one place that knows which error types are input or a refusal: one link of a chain,
/// `None` when the link itself says nothing (transient, or context whose cause is the next
/// link). The libraries say whether an error of theirs is the user's input; a file system
/// refusing access (the forge's `Denied`, an I/O error) is a refusal.
fn class_of(cause: &(dyn StdError + 'static)) -> Option<Class> {
    use crate::forge::ForgeError;
    let input = |yes: bool| yes.then_some(Class::Input);
    if let Some(e) = cause.downcast_ref::<Error>() {
        return match e {
            Error::Invalid(_) | Error::Config(_) => Some(Class::Input),
            Error::Upstream(e) => class_of(e),
            Error::Render(e) => class_of(e),
            Error::Chart(e) => class_of(e.as_ref()),
            Error::Plan(e) => class_of(e),
            Error::Oci(e) => class_of(e),
            Error::Tenants(e) => class_of(e),
            Error::Forge(e) => class_of(e),
            Error::Io { source, .. } => class_of(source),
            Error::Observe(crate::observe::ObserveError::Forge(e)) => class_of(e),
            Error::Observe(crate::observe::ObserveError::Oci(e)) => class_of(e),
            // A write that failed is the world's trouble, unless the file system refused it.
            Error::Apply(crate::apply::ApplyError::Forge(e)) => class_of(e),
            Error::Apply(_) => None,
            Error::InConfig { inner, .. } => class_of(inner.as_ref()),
            Error::Adopt { inner, .. } => class_of(inner.as_ref()),
            // Its source is a `Box<Error>`, which the chain shows as a box, not as an `Error`.
            Error::Context { source, .. } => class_of(source.as_ref()),
        };
    }
    if cause.is::<InvalidInput>() || cause.is::<crate::config::ConfigError>() {
        return Some(Class::Input);
    }
    if let Some(e) = cause.downcast_ref::<ForgeError>() {
        return matches!(e, ForgeError::Denied { .. }).then_some(Class::Denied);
    }
    if let Some(e) = cause.downcast_ref::<std::io::Error>() {
        return crate::forge::local::is_denied(e).then_some(Class::Denied);
    }
    if let Some(e) = cause.downcast_ref::<crate::upstream::UpstreamError>() {
        return input(matches!(e, crate::upstream::UpstreamError::Snapshot { .. }));
    }
    if let Some(e) = cause.downcast_ref::<crate::tenants::TenantsError>() {
        return input(matches!(e, crate::tenants::TenantsError::Config(_)));
    }
    if let Some(e) = cause.downcast_ref::<crate::render::RenderError>() {
        return input(e.is_invalid_input());
    }
    if let Some(e) = cause.downcast_ref::<crate::charts::FetchError>() {
        return input(e.is_invalid_input());
    }
    if let Some(e) = cause.downcast_ref::<crate::plan::PlanError>() {
        return input(e.is_invalid_input());
    }
    if let Some(e) = cause.downcast_ref::<crate::oci::OciError>() {
        return input(e.is_invalid_input());
    }
    if let Some(e) = cause.downcast_ref::<crate::adopt::AdoptError>() {
        return input(e.is_invalid_input());
    }
    if let Some(e) = cause.downcast_ref::<crate::package::PackageError>() {
        return input(e.is_invalid_input());
    }
    None
}

/// The exit status of a command that stopped with an error: its chain's [`Class`].
pub fn of_error_chain<'a>(
    chain: impl IntoIterator<Item = &'a (dyn StdError + 'static)>,
) -> ExitStatus {
    class_of_chain(chain).exit_status()
}

/// [`of_error_chain`] for a pipeline error and its sources.
pub fn of_error(err: &Error) -> ExitStatus {
    class_of_error(err).exit_status()
}

/// Tenants alone: 3 when some tenant failed (the others were processed). A blocked tenant is a
/// person's decision, not a failure: 0 (the command prints a warning line for it).
pub fn of_tenants(reports: &[TenantReport]) -> ExitStatus {
    if reports.iter().any(|r| r.outcome == Outcome::Failed) {
        ExitStatus::Partial
    } else {
        ExitStatus::Success
    }
}

/// A release run that returned: 1 when a series could not go on or was kept at its latest
/// release by an upstream error ([`Released::is_failure`]), else the tenants' status.
pub fn of_released(r: &Released) -> ExitStatus {
    if r.is_failure() {
        ExitStatus::Failure
    } else {
        of_tenants(&r.tenants)
    }
}

/// A whole `stackbot release` run, returned or stopped.
pub fn of_release(result: &Result<Released, Error>) -> ExitStatus {
    match result {
        Ok(r) => of_released(r),
        Err(e) => of_error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_input_anywhere_in_the_chain_exits_2_everything_else_1() {
        let invalid = Error::Invalid(InvalidInput("stackbot.yaml:3: unknown key".into()));
        assert_eq!(of_error(&invalid), ExitStatus::Invalid);
        assert_eq!(
            of_error(&invalid.context("rendering openstack/scs2 1.34")),
            ExitStatus::Invalid,
            "context on top keeps the inner verdict"
        );
        let transient = Error::Io {
            what: "reading the snapshot".into(),
            source: std::io::Error::other("connection reset"),
        };
        assert_eq!(of_error(&transient), ExitStatus::Failure);
        assert_eq!(
            of_error(&transient.context("releasing")),
            ExitStatus::Failure
        );
    }

    #[test]
    fn an_unreadable_metadata_yaml_exits_1_when_transient_2_when_refused_or_invalid() {
        use crate::forge::ForgeError;
        use crate::tenants::TenantsError;
        let metadata = |source: Box<dyn std::error::Error + Send + Sync>| {
            Error::Tenants(TenantsError::Metadata {
                release: "openstack-scs2-1-34-v1".into(),
                source,
            })
        };
        let transient = metadata(Box::new(ForgeError::Transient {
            what: "downloading metadata.yaml".into(),
            reason: "503".into(),
        }));
        let refused = metadata(Box::new(ForgeError::Denied {
            what: "downloading metadata.yaml".into(),
            reason: "403 Forbidden".into(),
        }));
        let invalid = metadata(Box::new(InvalidInput(
            "metadata.yaml: missing field `kubernetes`".into(),
        )));
        assert_eq!(of_error(&transient), ExitStatus::Failure, "{transient}");
        assert_eq!(class_of_error(&refused), Class::Denied, "{refused}");
        assert_eq!(of_error(&refused), ExitStatus::Invalid, "{refused}");
        assert_eq!(class_of_error(&invalid), Class::Input, "{invalid}");
        assert_eq!(of_error(&invalid), ExitStatus::Invalid, "{invalid}");
    }

    #[test]
    fn an_adoption_error_is_classified_here_by_its_own_kind() {
        let refused = crate::adopt::AdoptError::Refused {
            file: "csctl.yaml".into(),
            line: Some(3),
            field: Some("config.kubernetesVersion".into()),
            message: "not a version".into(),
            hint: "write vX.Y.Z".into(),
        };
        let bug = crate::adopt::AdoptError::RoundTrip {
            file: "cluster-class/values.yaml".into(),
            what: "line 4".into(),
        };
        for (inner, want) in [(refused, Class::Input), (bug, Class::Transient)] {
            let e = Error::Adopt {
                dir: "scs2/".into(),
                inner: Box::new(inner),
            };
            assert!(
                e.to_string().starts_with("scs2/cluster-class/")
                    || e.to_string().starts_with("scs2/csctl.yaml"),
                "{e}"
            );
            assert_eq!(e.class(), want, "{e}");
            // Through anyhow (`init`), the same class.
            let any = anyhow::Error::new(e).context("init");
            assert_eq!(class_of_chain(any.chain()), want);
        }
    }

    #[test]
    fn one_class_per_chain_gives_both_the_exit_code_and_the_hint() {
        let denied = Error::Forge(crate::forge::ForgeError::Denied {
            what: "writing /srv/forge/releases".into(),
            reason: "Permission denied".into(),
        });
        let input = Error::Render(crate::render::RenderError::Missing {
            root: "templates/openstack/scs2".into(),
        });
        let transient = Error::Forge(crate::forge::ForgeError::Io {
            what: "listing releases".into(),
            reason: "connection reset".into(),
        });
        let read_only = Error::Io {
            what: "writing the cache".into(),
            source: std::io::Error::from(std::io::ErrorKind::ReadOnlyFilesystem),
        };
        let oci = Error::InConfig {
            path: "stackbot.yaml".into(),
            inner: Box::new(Error::Oci(crate::oci::OciError::Config {
                message: "oci.repository is missing".into(),
                hint: "name the repository".into(),
            })),
        };
        let cases = [
            (denied, Class::Denied),
            (read_only, Class::Denied),
            (input, Class::Input),
            (oci, Class::Input),
            (transient, Class::Transient),
        ];
        for (e, want) in cases {
            let e = e.context("releasing");
            assert_eq!(e.class(), want, "{e}");
            assert_eq!(of_error(&e), want.exit_status(), "{e}");
        }
        assert_eq!(Class::Denied.exit_status(), ExitStatus::Invalid);
        assert_eq!(Class::Input.exit_status(), ExitStatus::Invalid);
        assert_eq!(Class::Transient.exit_status(), ExitStatus::Failure);
        assert!(
            Class::Denied
                .hint()
                .contains("re-running alone does not help")
        );
        assert!(Class::Input.hint().contains("nothing was changed"));
        assert!(Class::Transient.hint().contains("re-running is safe"));
    }

    #[test]
    fn library_errors_are_classified_as_their_library_says_wherever_they_sit_in_the_chain() {
        let package = anyhow::Error::new(crate::package::PackageError::invalid(
            "csctl.yaml",
            "is not YAML",
        ))
        .context("cannot hash stack");
        assert_eq!(class_of_chain(package.chain()), Class::Input);
        let io = anyhow::Error::new(std::io::Error::other("disk on fire")).context("reading");
        assert_eq!(class_of_chain(io.chain()), Class::Transient);
    }

    fn tenant(outcome: Outcome) -> TenantReport {
        TenantReport {
            tenant: "acme".into(),
            repository: "acme/gitops".into(),
            branch: None,
            stack: None,
            files: Vec::new(),
            action: crate::tenants::Action::None,
            outcome,
            pull: None,
            releases: Vec::new(),
            note: None,
            error: None,
            diff: String::new(),
            approval: None,
        }
    }

    fn run(degraded: Option<bool>, failed: bool, tenants: &[Outcome]) -> Released {
        let mut plan = crate::plan::Plan::default();
        plan.degraded
            .extend(degraded.map(|transient| crate::plan::Degraded {
                series: "openstack-scs2-1-35".into(),
                latest: "openstack-scs2-1-35-v1".into(),
                regressions: vec!["Kubernetes v1.35.4 is older than v1.35.5".into()],
                cause: vec!["node image for v1.35.5: HTTP 503".into()],
                transient,
            }));
        Released {
            plan,
            outcome: crate::apply::Outcome::default(),
            tenants: tenants.iter().cloned().map(tenant).collect(),
            failed: failed
                .then(|| crate::plan::Skipped {
                    what: crate::plan::Subject::StackMinor {
                        stack: "openstack/scs2".parse().unwrap(),
                        minor: "1.35".parse().unwrap(),
                    },
                    reason: crate::plan::SkipReason::Said("a tag points at another commit".into()),
                })
                .into_iter()
                .collect(),
            dashboard: None,
        }
    }

    #[test]
    fn a_returned_run_exits_with_its_worst_problem_release_before_tenants() {
        use ExitStatus::*;
        let cases = [
            (run(None, false, &[Outcome::Opened]), Success),
            (run(None, false, &[Outcome::Blocked]), Success),
            (
                run(None, false, &[Outcome::Failed, Outcome::Opened]),
                Partial,
            ),
            (run(Some(false), false, &[]), Success),
            (run(Some(true), false, &[]), Failure),
            (run(Some(true), false, &[Outcome::Failed]), Failure),
            (run(None, true, &[Outcome::Failed]), Failure),
        ];
        for (i, (r, want)) in cases.into_iter().enumerate() {
            assert_eq!(of_released(&r), want, "case {i}");
            assert_eq!(of_release(&Ok(r)), want, "case {i}");
        }
    }
}
