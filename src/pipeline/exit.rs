//! From what a run did to the exit code users see: the one mapping, shared by the command line
//! and by the world simulator, so the simulator judges the very code a workflow reacts to.
//!
//! Users script around these codes (docs/operations.md, "Exit codes"): `0` done or nothing to
//! do, `1` transient trouble (the next run finishes the job), `2` input a human must fix
//! (nothing was changed), `3` some tenants failed. When several apply, the worst wins: 2, then
//! 1, then 3.

use std::error::Error as StdError;

use crate::error::{ExitStatus, InvalidInput};
use crate::tenants::{Outcome, TenantReport};

use super::Error;
use super::release::Released;

/// Whether one link of an error chain is something a human must fix: input, or a file system
/// that refuses access (permission denied, read-only: no rerun changes that).
fn is_invalid_input(cause: &(dyn StdError + 'static)) -> bool {
    cause.is::<InvalidInput>()
        || cause.is::<crate::config::ConfigError>()
        || cause
            .downcast_ref::<Error>()
            .is_some_and(Error::is_invalid_input)
        || is_denied(cause)
}

/// Whether one link of an error chain is the file system refusing access (permission denied,
/// a read-only file system): the hint then says to fix the path, not to re-run.
pub fn is_denied(cause: &(dyn StdError + 'static)) -> bool {
    cause
        .downcast_ref::<crate::forge::ForgeError>()
        .is_some_and(|e| matches!(e, crate::forge::ForgeError::Denied { .. }))
        || cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(crate::forge::local::is_denied)
}

/// The exit status of a command that stopped with an error, from its whole chain (outermost
/// first): 2 when any cause is the user's input, else 1. Context added on the way up never
/// hides an invalid input underneath, and never turns transient trouble into a 2.
pub fn of_error_chain<'a>(
    chain: impl IntoIterator<Item = &'a (dyn StdError + 'static)>,
) -> ExitStatus {
    if chain.into_iter().any(is_invalid_input) {
        ExitStatus::Invalid
    } else {
        ExitStatus::Failure
    }
}

/// [`of_error_chain`] for a pipeline error and its sources.
pub fn of_error(err: &Error) -> ExitStatus {
    let first: &(dyn StdError + 'static) = err;
    of_error_chain(std::iter::successors(Some(first), |e| (*e).source()))
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
