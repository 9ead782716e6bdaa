//! The activity line: on a terminal, one line on stderr saying what the run is doing right
//! now (`⠋ 3s upstream: GET https://helm.cilium.io/index.yaml`, `tenants 12/40: acme`), so a
//! run waiting on the network is visibly waiting and on what.
//!
//! Code anywhere below the command line reports activity as a `tracing` event with
//! [`TARGET`] (`tracing::debug!(target: "stackbot::activity", …)`): no layer depends on this
//! one. The command line installs [`messages`] next to the log output and [`Writer`] as the log
//! writer, so a log line never tears the activity line; it calls [`finish`] before it prints
//! the result. Off a terminal, with `--quiet` or `TERM=dumb`, nothing is drawn and the
//! events cost a filter check (with `-vv` they are also log lines).

use std::io::Write;
use std::sync::OnceLock;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The `tracing` target of activity events.
pub const TARGET: &str = "stackbot::activity";

static LINE: OnceLock<ProgressBar> = OnceLock::new();

/// The line (hidden until [`start`] makes it visible).
fn line() -> &'static ProgressBar {
    LINE.get_or_init(|| {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed:>4} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar
    })
}

/// Draw the line from now on when `visible` (the command line's decision: a terminal, no
/// `--quiet`, no `TERM=dumb`).
pub fn start(visible: bool) {
    if visible {
        let bar = line();
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(120));
    }
}

/// Show `message` as what the run is doing now.
pub fn set(message: &str) {
    line().set_message(message.to_string());
}

/// What the line says now (also when hidden).
pub fn current() -> String {
    line().message()
}

/// Clear the line for good: the result is about to be printed.
pub fn finish() {
    line().finish_and_clear();
}

/// A layer handing the message of every event with target `target` to `to`, whatever the log
/// level: what feeds the activity line ([`set`]) and the journal ([`super::journal`]).
pub fn messages<S>(target: &'static str, to: fn(String)) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;
    Messages(to).with_filter(tracing_subscriber::filter::filter_fn(move |m| {
        m.target() == target
    }))
}

struct Messages(fn(String));

struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.0 = value.to_string();
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Messages {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut m = Message(String::new());
        event.record(&mut m);
        (self.0)(m.0);
    }
}

/// The log writer: stderr, with the activity line lifted while a log line is written.
#[derive(Clone, Copy, Default)]
pub struct Writer;

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        line().suspend(|| std::io::stderr().write_all(buf))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Writer {
    type Writer = Writer;
    fn make_writer(&'a self) -> Writer {
        Writer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn activity_events_become_the_line_and_other_events_do_not() {
        let subscriber = tracing_subscriber::registry().with(messages(TARGET, |m| set(&m)));
        tracing::subscriber::with_default(subscriber, || {
            tracing::debug!(target: "stackbot::activity", "upstream: GET https://x/index.yaml");
            tracing::warn!("a log line is not activity");
        });
        assert_eq!(current(), "upstream: GET https://x/index.yaml");
        assert!(line().is_hidden(), "drawn only after start(true)");
    }
}
