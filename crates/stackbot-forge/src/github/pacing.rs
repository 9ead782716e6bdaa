//! Spacing and capping of mutating requests, on the run's clock.
//!
//! This is the one place writes are paced: the transport knows the host (remote writes are
//! spaced, loopback ones are not) and sees every request, whichever part of the bot sends it.
//! Tenant propagation used to pace as well, on top of this, which halved the write rate.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::locked;
use crate::clock::Clock;

/// Spaces mutating requests at least `interval` apart (GitHub asks for ≥ 1 s between mutative
/// calls to stay inside the secondary rate limits). Callers from several threads share one slot
/// sequence, so the rate holds for the whole process, not per thread.
#[derive(Debug)]
pub struct Pacer {
    interval: Duration,
    next: Mutex<Option<Instant>>,
}

impl Pacer {
    pub fn new(interval: Duration) -> Self {
        Pacer {
            interval,
            next: Mutex::new(None),
        }
    }

    /// Take the next slot and wait for it. The wait blocks the calling thread (the forge runs
    /// each call with `block_on` on the caller's thread, so no runtime worker is held).
    pub fn wait(&self, clock: &dyn Clock) {
        if self.interval.is_zero() {
            return;
        }
        let slot = {
            let mut next = locked(&self.next);
            let now = clock.instant();
            let slot = next.map_or(now, |n| n.max(now));
            *next = Some(slot + self.interval);
            slot
        };
        let wait = slot.saturating_duration_since(clock.instant());
        if !wait.is_zero() {
            clock.sleep(wait);
        }
    }
}

/// Caps mutating requests per rolling hour (GitHub's secondary limit refuses content-creating
/// requests beyond about 500 an hour). Refusing locally, before sending, keeps the run's state
/// clean: the write simply did not happen, and the next run reconciles it.
#[derive(Debug)]
pub struct WriteBudget {
    /// `None`: unlimited.
    pub per_hour: Option<u32>,
    /// Send times of the writes inside the current window, oldest first.
    sent: Mutex<VecDeque<Instant>>,
}

impl WriteBudget {
    const WINDOW: Duration = Duration::from_secs(3600);

    pub fn new(per_hour: Option<u32>) -> Self {
        WriteBudget {
            per_hour,
            sent: Mutex::new(VecDeque::new()),
        }
    }

    /// Take one write from the budget, or say why not. Shared by all threads of the process.
    pub fn spend(&self, clock: &dyn Clock) -> Result<(), String> {
        let Some(limit) = self.per_hour else {
            return Ok(());
        };
        let mut sent = locked(&self.sent);
        let now = clock.instant();
        while sent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Self::WINDOW)
        {
            sent.pop_front();
        }
        if sent.len() >= limit as usize {
            return Err(format!(
                "hourly write budget of {limit} content-creating requests used \
                 (forge.github.writes_per_hour); the next scheduled run continues where this \
                 one stopped"
            ));
        }
        sent.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    fn clock() -> ManualClock {
        ManualClock::new("2026-05-01T12:00:00Z".parse().unwrap())
    }

    #[test]
    fn writes_take_consecutive_slots_one_interval_apart() {
        let c = clock();
        let p = Pacer::new(Duration::from_secs(1));
        let t0 = c.instant();
        for _ in 0..4 {
            p.wait(&c);
        }
        assert_eq!(c.instant() - t0, Duration::from_secs(3), "4 writes, 3 gaps");
        // Time that passes on its own counts towards the next gap.
        c.advance(Duration::from_secs(10));
        let t1 = c.instant();
        p.wait(&c);
        assert_eq!(c.instant(), t1, "a late write goes at once");
    }

    #[test]
    fn the_hourly_budget_refuses_then_recovers_after_the_window() {
        let c = clock();
        let b = WriteBudget::new(Some(2));
        assert!(b.spend(&c).is_ok());
        c.advance(Duration::from_secs(1800));
        assert!(b.spend(&c).is_ok());
        let e = b.spend(&c).unwrap_err();
        assert!(e.contains("writes_per_hour"), "{e}");
        c.advance(Duration::from_secs(1800));
        assert!(b.spend(&c).is_ok(), "the first write left the window");
        assert!(b.spend(&c).is_err());
        assert!(WriteBudget::new(None).spend(&c).is_ok());
    }
}
