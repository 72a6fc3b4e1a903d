//! The integration tests: one test binary (`cargo test --test cli`), one
//! module per area, each running the real binaries or the library. Run one
//! area with a filter: `cargo test --test cli render_golden::`.

mod common;

mod alert;
mod browser;
mod diff;
mod docs;
mod explain;
mod explain_other_systems;
mod fuzz_http;
mod fuzz_readers;
mod hostile_input;
mod layers;
mod live;
mod llm;
mod man_pages;
mod merge_property;
mod parse_ag2;
mod parse_autogen;
mod parse_browser_use;
mod parse_coding_agent;
mod parse_expected;
mod parse_exports;
mod parse_formats;
mod parse_fuzz;
mod parse_inspect_ai;
mod parse_mlflow;
mod parse_spans_exports;
mod parse_transcripts;
mod pipeline;
mod recv;
mod render_cli;
mod render_golden;
mod report_structure;
mod runs;
mod scale_out;
mod spans_stream;
mod spark;
mod transcript_property;
mod triage_cmd;
mod usability;
