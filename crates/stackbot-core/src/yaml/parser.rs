//! The event parser of libyaml (the `libyaml-rs` translation that `yaml_serde` itself runs),
//! behind a safe interface.
//!
//! `yaml_serde` keeps its event parser private and loads a whole document's events before it
//! looks at any of them, so it cannot stop early: a document nested 100,000 flow levels deep
//! costs minutes in libyaml's scanner (its simple-key bookkeeping is linear in the nesting, per
//! token) before `yaml_serde`'s recursion limit ever sees it. Reading the same parser's events
//! one at a time lets [`super::Reader`] refuse at the first event past a limit, with the
//! scanner's work bounded by that limit. Same parser, so what is accepted here parses the
//! same way in `yaml_serde` afterwards, and syntax errors read the same.
//!
//! This is the only `unsafe` in the crate; every block says why it holds.

use std::marker::PhantomData;
use std::mem::MaybeUninit;

use libyaml_rs as sys;

/// One parser event, with the data the bounded reader and the streaming readers use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    /// `*name`.
    Alias {
        anchor: Vec<u8>,
    },
    Scalar {
        anchor: Option<Vec<u8>>,
        /// The scalar's value (escapes resolved, folding applied).
        value: Vec<u8>,
        /// Written without quotes or block indicator: only such scalars are resolved as
        /// null, booleans or numbers.
        plain: bool,
        /// Carries an explicit tag (`!!str`, `!custom`).
        tagged: bool,
    },
    SequenceStart {
        anchor: Option<Vec<u8>>,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<Vec<u8>>,
    },
    MappingEnd,
}

/// A syntax error as libyaml describes it (the same words `yaml_serde` shows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line of the problem.
    pub line: usize,
    pub message: String,
}

/// A libyaml parser reading `input`, which it borrows for its whole life.
pub struct Parser<'a> {
    /// Boxed: libyaml keeps pointers into its own buffers, never to the struct itself, but a
    /// fixed address costs nothing and matches how `yaml_serde` holds it.
    sys: Box<MaybeUninit<sys::yaml_parser_t>>,
    done: bool,
    _input: PhantomData<&'a [u8]>,
}

impl<'a> Parser<'a> {
    /// A parser over `input` (UTF-8 is assumed, as `yaml_serde` does).
    pub fn new(input: &'a [u8]) -> Self {
        let mut sys = Box::new(MaybeUninit::<sys::yaml_parser_t>::uninit());
        // SAFETY: `yaml_parser_initialize` fully initialises the struct it is given (it zeroes
        // it first) and only fails when an allocation fails, which aborts in Rust anyway. The
        // input pointer stays valid for `'a`, which outlives the parser (`PhantomData`).
        unsafe {
            let p = sys.as_mut_ptr();
            if sys::yaml_parser_initialize(p).fail {
                panic!("libyaml could not allocate its parser");
            }
            sys::yaml_parser_set_encoding(p, sys::YAML_UTF8_ENCODING);
            sys::yaml_parser_set_input_string(p, input.as_ptr(), input.len() as u64);
        }
        Parser {
            sys,
            done: false,
            _input: PhantomData,
        }
    }

    /// The next event and the 1-based line it starts on; `None` after the stream's end.
    pub fn next_event(&mut self) -> Option<Result<(Event, usize), SyntaxError>> {
        if self.done {
            return None;
        }
        let mut event = MaybeUninit::<sys::yaml_event_t>::uninit();
        // SAFETY: the parser was initialised in `new`; `yaml_parser_parse` writes a complete
        // event (or none, on failure: then nothing is read from `event` and nothing needs
        // freeing). A successful event is converted while its buffers are alive and freed
        // exactly once right after.
        unsafe {
            let p = self.sys.as_mut_ptr();
            if (&(*p)).error != sys::YAML_NO_ERROR
                || sys::yaml_parser_parse(p, event.as_mut_ptr()).fail
            {
                self.done = true;
                return Some(Err(syntax_error(&*p)));
            }
            let e = event.as_mut_ptr();
            let line = (*e).start_mark.line as usize + 1;
            let converted = convert(&*e);
            sys::yaml_event_delete(e);
            if converted == Event::StreamEnd {
                self.done = true;
            }
            Some(Ok((converted, line)))
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        // SAFETY: initialised in `new` and deleted exactly once, here.
        unsafe { sys::yaml_parser_delete(self.sys.as_mut_ptr()) }
    }
}

/// A NUL-terminated string libyaml owns, copied (`None` for a null pointer).
///
/// SAFETY (caller): `ptr` is null or points at a NUL-terminated string that lives for the call.
unsafe fn c_bytes(ptr: *const u8) -> Option<Vec<u8>> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: see the function's contract.
    Some(
        unsafe { std::ffi::CStr::from_ptr(ptr.cast()) }
            .to_bytes()
            .to_vec(),
    )
}

/// SAFETY (caller): `e` is an event libyaml produced and has not freed; the union field read
/// is the one its `type_` names.
unsafe fn convert(e: &sys::yaml_event_t) -> Event {
    // SAFETY: each arm reads the union member that belongs to the event's type.
    unsafe {
        match e.type_ {
            sys::YAML_STREAM_START_EVENT => Event::StreamStart,
            sys::YAML_STREAM_END_EVENT | sys::YAML_NO_EVENT => Event::StreamEnd,
            sys::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
            sys::YAML_DOCUMENT_END_EVENT => Event::DocumentEnd,
            sys::YAML_ALIAS_EVENT => Event::Alias {
                anchor: c_bytes(e.data.alias.anchor).unwrap_or_default(),
            },
            sys::YAML_SCALAR_EVENT => {
                let s = e.data.scalar;
                let value = if s.value.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(s.value, s.length as usize).to_vec()
                };
                Event::Scalar {
                    anchor: c_bytes(s.anchor),
                    value,
                    plain: s.style == sys::YAML_PLAIN_SCALAR_STYLE,
                    tagged: !s.tag.is_null(),
                }
            }
            sys::YAML_SEQUENCE_START_EVENT => Event::SequenceStart {
                anchor: c_bytes(e.data.sequence_start.anchor),
            },
            sys::YAML_SEQUENCE_END_EVENT => Event::SequenceEnd,
            sys::YAML_MAPPING_START_EVENT => Event::MappingStart {
                anchor: c_bytes(e.data.mapping_start.anchor),
            },
            _ => Event::MappingEnd,
        }
    }
}

/// libyaml's problem and context, worded as `yaml_serde` words them.
fn syntax_error(p: &sys::yaml_parser_t) -> SyntaxError {
    // SAFETY: `problem` and `context` are null or static NUL-terminated strings of libyaml.
    let (problem, context) = unsafe { (c_bytes(p.problem.cast()), c_bytes(p.context.cast())) };
    let text = |b: Option<Vec<u8>>| b.map(|b| String::from_utf8_lossy(&b).into_owned());
    let mark = |m: &sys::yaml_mark_t| format!("line {} column {}", m.line + 1, m.column + 1);
    let mut message = text(problem).unwrap_or_else(|| "libyaml failed without a reason".into());
    if p.problem_mark.line != 0 || p.problem_mark.column != 0 {
        message.push_str(&format!(" at {}", mark(&p.problem_mark)));
    }
    if let Some(c) = text(context) {
        message.push_str(&format!(", {c} at {}", mark(&p.context_mark)));
    }
    SyntaxError {
        line: p.problem_mark.line as usize + 1,
        message,
    }
}
