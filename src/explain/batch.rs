//! The runs to explain, gathered in first-appearance order from whatever
//! reads them: event and run records (triage-explain), or a format's
//! reader straight through the [`EventConsumer`] contract (`triage report
//! --explain`), with nothing written and read back in between.

use std::collections::HashMap;

use crate::explain::step::{EventExtras, Step};
use crate::explain::view::RunView;
use crate::record::{
    EventConsumer, EventOut, EventView, Kind, OutOfOrder, RecordError, RunRec, SourceRec,
    json_reason,
};
use crate::stream::Record;
use crate::timestamp::Timestamp;

/// The runs read so far: each run's steps and its `run` record.
#[derive(Default)]
pub struct RunBatch {
    order: Vec<String>,
    steps: HashMap<String, Vec<Step>>,
    records: HashMap<String, RunRec>,
}

impl RunBatch {
    fn slot(&mut self, run_id: &str) -> &mut Vec<Step> {
        if !self.steps.contains_key(run_id) {
            self.order.push(run_id.to_string());
        }
        self.steps.entry(run_id.to_string()).or_default()
    }

    /// Adds an event record, with the fields detectors read beyond the
    /// view read from its `line`. A raw trace event (`untyped`) has no
    /// `step`: it is numbered by its place in the run, as triage-parse
    /// would.
    pub(crate) fn add_event_record(
        &mut self,
        ev: &EventView<'_>,
        line: &[u8],
        untyped: bool,
    ) -> Result<(), RecordError> {
        let extras: EventExtras = serde_json::from_slice(line)
            .map_err(|e| RecordError::Unreadable(json_reason(line, &e)))?;
        let mut step = Step::from_event(ev, extras);
        let run = self.slot(&ev.run_id);
        if untyped {
            step.step = run.len() as u64;
        }
        run.push(step);
        Ok(())
    }

    /// Takes an event or run record (a line with no `kind` is read as a
    /// trace event); None for records of other kinds, which the caller
    /// passes on. The error says why a record does not read.
    pub(crate) fn add_record(&mut self, rec: &Record<'_>) -> Option<Result<(), RecordError>> {
        let unreadable =
            |line: &[u8], e: &serde_json::Error| RecordError::Unreadable(json_reason(line, e));
        Some(match rec {
            Record::Event { event, line, .. } => self.add_event_record(event, line, false),
            Record::Untyped(line) => serde_json::from_slice::<EventView<'_>>(line)
                .map_err(|e| unreadable(line, &e))
                .and_then(|event| self.add_event_record(&event, line, true)),
            Record::Other {
                kind: Some(Kind::Run),
                line,
            } => serde_json::from_slice::<RunRec>(line)
                .map(|rec| self.add_run_record(rec))
                .map_err(|e| unreadable(line, &e)),
            Record::Header(_) | Record::Other { .. } => return None,
        })
    }

    /// Adds a run record; a run without events is still explained.
    pub(crate) fn add_run_record(&mut self, rec: RunRec) {
        self.slot(&rec.run_id);
        self.records.insert(rec.run_id.clone(), rec);
    }

    /// The runs, each with its steps and record, in the order first seen.
    pub(crate) fn into_views(mut self) -> impl Iterator<Item = RunView> {
        self.order.into_iter().map(move |id| {
            let steps = self.steps.remove(&id).unwrap_or_default();
            let rec = self.records.remove(&id);
            RunView::new(id, steps, rec)
        })
    }
}

impl EventConsumer for RunBatch {
    fn add_source(&mut self, _source: SourceRec) {}

    fn add_run(&mut self, run: &RunRec) {
        self.add_run_record(run.clone());
    }

    fn add_event_at(&mut self, ev: &EventView<'_>, _at: Option<Timestamp>) -> Option<OutOfOrder> {
        let step = Step::from_event(ev, EventExtras::default());
        self.slot(&ev.run_id).push(step);
        None
    }

    fn add_event(&mut self, ev: &EventOut<'_>, step: u64) -> Option<OutOfOrder> {
        self.slot(&ev.run_id).push(Step::from_out(ev, step));
        None
    }

    fn add_event_line(&mut self, view: &EventView<'_>, line: &[u8]) -> Option<OutOfOrder> {
        // The line is the reader's own record of the event, so it reads.
        if self.add_event_record(view, line, false).is_err() {
            self.add_event_at(view, None);
        }
        None
    }

    fn views_suffice(&self) -> bool {
        false
    }
}
