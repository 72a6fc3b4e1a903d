//! triage-recv: an OTLP/HTTP receiver that writes each trace export it
//! acknowledges as one line of OTLP JSON, for triage-parse.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use clap::Parser;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::cli::{self, CommonArgs, Tool};
use crate::plumbing::diag;
use crate::plumbing::diag::Diag;
use crate::recv::export::TRACES_PATH;
use crate::recv::{self, Control, LineOut, LineSink, Settings};

/// Take spans straight from running agents: an OTLP/HTTP trace receiver.
///
/// Takes POST /v1/traces (JSON or protobuf, plain or gzip) and writes each
/// export it acknowledges as one line of OTLP JSON, the shape of the
/// OpenTelemetry Collector's file exporter, so `triage-recv | triage-parse`
/// works.
#[derive(Parser, Debug)]
#[command(
    name = "triage-recv",
    version,
    // A receiver does not stop for one sender's bad request.
    mut_arg("strict", |a| a.help(
        "Accepted for symmetry, no effect: a request that cannot be read is answered 400 and the receiver goes on"
    ))
)]
pub struct Args {
    /// Address to listen on: HOST:PORT (localhost resolves), or :PORT for every interface as the Collector reads it. Anything but loopback exposes the receiver to the network: set --token then.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4318", value_parser = listen_address)]
    pub listen: SocketAddr,
    /// Append the lines to FILE instead of writing them to stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Require `Authorization: Bearer TOKEN`. Prefer TRIAGE_RECV_TOKEN, which sets it too: flags show in ps.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TRIAGE_RECV_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Largest request body taken, in bytes, before and after gunzip (K, M, G suffixes allowed); larger ones get 413.
    #[arg(long, value_name = "BYTES", default_value = "16M", value_parser = parse_size)]
    pub max_body: usize,
    /// Requests decoded and written at once.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = crate::cli::positive::<u16>)]
    pub workers: u16,
    /// Complete requests that may wait for a worker; past that, more get 503 and retry.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = crate::cli::positive::<u16>)]
    pub queue: u16,
    /// Connections open at once, each read by a light thread until its request is complete (a slow client holds no worker); past that, new ones get 503.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = crate::cli::positive::<u16>)]
    pub max_connections: u16,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Tool for Args {
    const NAME: &'static str = "triage-recv";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[
        (
            "PROTOCOL",
            "POST /v1/traces with Content-Type application/json or application/x-protobuf (what OpenTelemetry SDKs \
send by default), optionally Content-Encoding gzip. Answers 200 with an empty ExportTraceServiceResponse only after \
the request's line is written and flushed; 400 for a body that does not decode, 401 without the bearer token, 404 \
for another path, 405 for another method, 413 over --max-body, 415 for another content type or encoding, 503 when \
the queue is full (Retry-After: 1). Error bodies are google.rpc.Status messages in the request's encoding.\n\n\
On SIGTERM or SIGINT the receiver stops accepting connections, finishes the requests it took, flushes and exits 0.",
        ),
        (
            "EXAMPLES",
            "triage-recv --output spans.jsonl &\n\n\
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 python my_agents.py\n\n\
triage report spans.jsonl\n\n\
triage-recv | triage-parse --line-buffered | tee events.ndjson\n\n\
TRIAGE_RECV_TOKEN=s3cret triage-recv --listen 0.0.0.0:4318 -o /var/spool/triage/spans.jsonl",
        ),
    ];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        // A service runs for days: its warnings are capped per minute, so
        // an attack that goes on is still heard of.
        diag.cap_per(std::time::Duration::from_secs(60));
        let out = match &self.output {
            Some(path) => {
                let (out, repaired) = recv::open_output(path).map_err(|e| {
                    anyhow::anyhow!("{}: {}", path.display(), diag::output_reason(&e))
                })?;
                if let Some(note) = repaired {
                    diag.warn("torn-line", format_args!("{note}"));
                }
                out
            }
            None => LineOut::Stream(Box::new(io::stdout())),
        };
        // A file-size limit would kill the process (SIGXFSZ) in the middle
        // of a write; handled, the write fails with EFBIG instead and the
        // receiver cuts the torn line and stops with a message.
        let _ = signal_hook::flag::register(
            signal_hook::consts::SIGXFSZ,
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
        let sink = std::sync::Arc::new(LineSink::new(out));
        let settings = Settings {
            max_body: self.max_body,
            workers: usize::from(self.workers),
            queue: usize::from(self.queue),
            max_connections: usize::from(self.max_connections),
            token: self.token.clone().filter(|t| !t.is_empty()),
        };
        let listener = recv::bind(self.listen)?;
        let local = listener.local_addr()?;
        let control = std::sync::Arc::new(Control::new());
        let mut signals = Signals::new([SIGTERM, SIGINT])?;
        let signal_handle = signals.handle();
        if !self.common.quiet {
            diag::to_stderr(format_args!(
                "{}: listening on http://{local}{TRACES_PATH}\n",
                Self::NAME
            ));
        }
        if settings.token.is_none() && !local.ip().is_loopback() {
            diag.warn(
                "open to the network",
                format_args!(
                    "{local} is reachable from other hosts and there is no --token: anyone who can reach it can write spans"
                ),
            );
        }
        std::thread::scope(|scope| {
            scope.spawn(|| {
                if signals.forever().next().is_some() {
                    control.stop();
                }
            });
            recv::serve(listener, control.clone(), settings, sink.clone(), diag);
            signal_handle.close();
        });
        match sink.take_error() {
            Some(e) => {
                let to = self
                    .output
                    .as_ref()
                    .map_or_else(|| "stdout".to_string(), |p| p.display().to_string());
                Err(anyhow::anyhow!(
                    "writing {to}: {}; the lines written before are whole, and what was not \
                     written was not acknowledged",
                    diag::output_reason(&e)
                ))
            }
            None => Ok(cli::EXIT_OK),
        }
    }
}

/// "127.0.0.1:4318", "[::1]:4318", "localhost:4318" (the first address
/// it resolves to), or ":4318" for every interface, as Go programs and the
/// OpenTelemetry Collector read it.
fn listen_address(s: &str) -> Result<SocketAddr, String> {
    let expected =
        || format!("{s:?}: expected HOST:PORT, like 127.0.0.1:4318, localhost:4318 or :4318");
    if let Some(port) = s.strip_prefix(':') {
        let port: u16 = port.parse().map_err(|_| expected())?;
        return Ok(SocketAddr::from(([0, 0, 0, 0], port)));
    }
    if let Ok(addr) = s.parse() {
        return Ok(addr);
    }
    if !s.contains(':') {
        return Err(expected());
    }
    s.to_socket_addrs()
        .map_err(|e| format!("{s:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("{s:?}: the host resolves to no address"))
}

/// A size flag as `cli::size` reads it ("16M" is 16 MiB), in memory.
fn parse_size(s: &str) -> Result<usize, String> {
    let n = cli::size(s)?;
    usize::try_from(n).map_err(|_| format!("{s:?}: out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_take_hosts_and_a_bare_port() {
        assert_eq!(
            listen_address("127.0.0.1:4318"),
            Ok(([127, 0, 0, 1], 4318).into())
        );
        assert_eq!(listen_address(":4318"), Ok(([0, 0, 0, 0], 4318).into()));
        assert!(listen_address("localhost:4318").unwrap().ip().is_loopback());
        assert_eq!(listen_address("[::1]:9").unwrap().port(), 9);
        for bad in ["4318", ":http", "localhost", "127.0.0.1:99999"] {
            let e = listen_address(bad).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("16M"), Ok(16 << 20));
        assert_eq!(parse_size("512k"), Ok(512 << 10));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("0").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999999999G").is_err());
    }
}
