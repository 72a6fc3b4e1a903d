//! Whether more of a piped stdin has arrived, so that readers hand lines
//! over when the writer pauses (`tail -f log | triage-parse
//! --line-buffered`) instead of holding them until a 1 MiB chunk fills.

use std::time::Duration;

/// How long a live input must stay silent before what was read is handed
/// on: long enough that a writer streaming at full speed is never taken for
/// a paused one, too short for anyone watching to notice.
pub(crate) const SILENCE: Duration = Duration::from_millis(10);

/// A probe of stdin's unread bytes.
#[derive(Clone, Copy, Debug)]
pub struct Waiting(());

impl Waiting {
    /// The probe of stdin, when the system can tell (Linux: `FIONREAD`).
    pub(crate) fn stdin() -> Option<Waiting> {
        let probe = Waiting(());
        probe.bytes().map(|_| probe)
    }

    /// The bytes stdin holds that a read would return now without waiting;
    /// `None` when the system cannot tell.
    pub(crate) fn bytes(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        {
            rustix::io::ioctl_fionread(std::io::stdin()).ok()
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// True when nothing waits on stdin and nothing arrives within
    /// [`SILENCE`]: the writer has paused. The end of input is not silence.
    pub(crate) fn silent(probe: Option<Waiting>) -> bool {
        probe.is_some_and(|w| w.bytes() == Some(0) && !w.arrives_within(SILENCE))
    }

    /// Whether stdin becomes readable (data or its end) within `wait`.
    pub(crate) fn arrives_within(&self, wait: Duration) -> bool {
        #[cfg(target_os = "linux")]
        {
            use rustix::event::{PollFd, PollFlags, Timespec, poll};
            let stdin = std::io::stdin();
            let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
            let timeout = Timespec {
                tv_sec: wait.as_secs() as i64,
                tv_nsec: i64::from(wait.subsec_nanos()),
            };
            // A failed poll is taken for arrival: the reader then waits in
            // its read, as it would without a probe.
            poll(&mut fds, Some(&timeout)).map_or(true, |ready| ready > 0)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = wait;
            true
        }
    }
}
