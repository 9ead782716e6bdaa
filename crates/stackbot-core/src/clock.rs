//! Time as a value: the one way code below the CLI learns what time it is.
//!
//! Pacing, backoff, rate-limit resets, token expiry and tag dates all need "now". Reading the
//! system clock deep inside the forge would make those paths untestable (a test cannot make an
//! hour pass) and would let two parts of one run disagree about the date. So the clock is
//! created once at the edge (`SystemClock`, in the binary: `stackbot::clock::SystemClock`) and
//! handed down as `Arc<dyn Clock>`; tests hand down a [`ManualClock`] and move it forward
//! themselves. Core cannot read the real clock at all: `crates/stackbot-core/clippy.toml`
//! disallows it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

/// A source of time. Implementations must be cheap to call and safe to share between threads.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Wall-clock time: tag and commit dates, `x-ratelimit-reset`, token expiry.
    fn now(&self) -> DateTime<Utc>;
    /// Monotonic time for pacing and backoff (never goes backwards).
    fn instant(&self) -> Instant;
    /// Wait `d`. A manual clock advances instead of sleeping, so tests of pacing are instant.
    fn sleep(&self, d: Duration);
}

/// A shared clock handle.
pub type SharedClock = Arc<dyn Clock>;

/// A clock that moves only when told to (or when something "sleeps" on it). For tests and
/// simulations: an hour of pacing takes no time, and a token can be made to expire mid-run.
#[derive(Debug)]
pub struct ManualClock {
    state: Mutex<(DateTime<Utc>, Duration)>,
    origin: Instant,
}

impl ManualClock {
    /// A clock showing `start`.
    // `Instant` has no constructor but `now`: the origin of the clock's monotonic time, never
    // read as a time of day (`instant()` is the origin plus the time the clock was moved).
    #[allow(clippy::disallowed_methods)]
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock {
            state: Mutex::new((start, Duration::ZERO)),
            origin: Instant::now(),
        }
    }

    /// A shared handle to a new manual clock.
    pub fn shared(start: DateTime<Utc>) -> Arc<ManualClock> {
        Arc::new(Self::new(start))
    }

    /// Move time forward by `d`.
    pub fn advance(&self, d: Duration) {
        let mut s = self.state.lock().expect("clock lock");
        s.0 += chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX);
        s.1 += d;
    }

    /// Set the wall clock to `t` (monotonic time moves forward by the difference when `t` is
    /// later, and stays when it is earlier: monotonic time never goes back).
    pub fn set(&self, t: DateTime<Utc>) {
        let mut s = self.state.lock().expect("clock lock");
        if let Ok(forward) = (t - s.0).to_std() {
            s.1 += forward;
        }
        s.0 = t;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.state.lock().expect("clock lock").0
    }
    fn instant(&self) -> Instant {
        self.origin + self.state.lock().expect("clock lock").1
    }
    fn sleep(&self, d: Duration) {
        self.advance(d);
    }
}

/// A clock that reads `day` at the inner clock's time of day: the run's `--now` for what the
/// local forge stamps (release dates, commit and tag times), so a demo played at
/// `--now 2026-05-01` shows releases of that day, not of the machine's date, and the status
/// report judges them on one clock. Monotonic time and sleeping stay the inner clock's.
#[derive(Debug)]
pub struct OnDay {
    inner: SharedClock,
    day: chrono::NaiveDate,
}

impl Clock for OnDay {
    fn now(&self) -> DateTime<Utc> {
        let real = self.inner.now();
        self.day.and_time(real.time()).and_utc()
    }
    fn instant(&self) -> Instant {
        self.inner.instant()
    }
    fn sleep(&self, d: Duration) {
        self.inner.sleep(d);
    }
}

/// `clock`, read on `day` (the same clock when it already shows that day).
pub fn on_day(clock: SharedClock, day: chrono::NaiveDate) -> SharedClock {
    if clock.now().date_naive() == day {
        clock
    } else {
        Arc::new(OnDay { inner: clock, day })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_on_another_day_keeps_the_time_of_day() {
        let real: SharedClock = Arc::new(ManualClock::new("2026-12-01T13:05:00Z".parse().unwrap()));
        let c = on_day(real.clone(), "2026-05-01".parse().unwrap());
        assert_eq!(
            c.now(),
            "2026-05-01T13:05:00Z".parse::<DateTime<Utc>>().unwrap()
        );
        let same = on_day(real, "2026-12-01".parse().unwrap());
        assert_eq!(
            same.now(),
            "2026-12-01T13:05:00Z".parse::<DateTime<Utc>>().unwrap()
        );
    }

    #[test]
    fn a_manual_clock_moves_only_when_told_and_sleeping_moves_it() {
        let start = "2026-05-01T12:00:00Z".parse().unwrap();
        let c = ManualClock::new(start);
        let i0 = c.instant();
        assert_eq!(c.now(), start);
        c.sleep(Duration::from_secs(3600));
        assert_eq!(c.now(), start + chrono::Duration::hours(1));
        assert_eq!(c.instant() - i0, Duration::from_secs(3600));
        c.set(start);
        assert_eq!(c.now(), start);
        assert_eq!(
            c.instant() - i0,
            Duration::from_secs(3600),
            "monotonic never goes back"
        );
    }
}
