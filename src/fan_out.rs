//! The one bounded fan-out over tenant repositories: the status's reading
//! (`observe::status`) and the tenant stage's reads and writes (`pipeline::tenants`) run through
//! it. Neither room's: it only bounds threads.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of every item, at most `workers` at a time, the results in the items' order.
pub fn fan_out<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(t) = items.get(i) else { break };
                    let r = f(t);
                    results.lock().expect("results lock").push((i, r));
                }
            });
        }
    });
    let mut out = results.into_inner().expect("results lock");
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}
