//! The one tokio runtime of the process (issue 31, item 1 "Net"). The GitHub forge
//! (octocrab), the OCI registry (oci-client), the upstream reader (async reqwest) and the
//! signal watcher all block on it or spawn onto it, so a run starts one set of I/O threads
//! instead of one runtime per client (docs/http.md, "What is shared").

use std::sync::OnceLock;
use tokio::runtime::Runtime;

/// Worker threads of the shared runtime. Two, as the GitHub forge had on its own: every
/// caller blocks on one request at a time, so more workers would only idle.
const WORKERS: usize = 2;

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The process's runtime, built on first use and kept for the life of the process (never
/// dropped, so no client's connection pool outlives the runtime it was made on). The error
/// is the operating system's refusal to start the threads; the next call tries again.
pub fn runtime() -> std::io::Result<&'static Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .thread_name("stackbot-io")
        .enable_all()
        .build()?;
    // Two first callers may race; the loser's runtime is dropped here, before any use.
    Ok(RUNTIME.get_or_init(|| built))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_caller_gets_the_same_runtime() {
        let a = runtime().expect("runtime") as *const Runtime;
        let b = std::thread::spawn(|| runtime().expect("runtime") as *const Runtime as usize)
            .join()
            .expect("thread");
        assert_eq!(
            a as usize, b,
            "a second thread must reuse the process's runtime"
        );
    }

    #[test]
    fn blocking_on_it_from_two_threads_at_once_works() {
        let threads: Vec<_> = (0..2u64)
            .map(|i| {
                std::thread::spawn(move || {
                    runtime().expect("runtime").block_on(async move {
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                        i
                    })
                })
            })
            .collect();
        let got: Vec<u64> = threads
            .into_iter()
            .map(|t| t.join().expect("thread"))
            .collect();
        assert_eq!(got, vec![0, 1]);
    }
}
