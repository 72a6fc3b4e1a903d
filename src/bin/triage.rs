// The readers of trace formats allocate on the decoding threads what this
// thread frees, and glibc's arenas took a lock for each such free. The
// record stages keep the system allocator, which holds less memory.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    triage::cmd::main::<triage::cmd::triage::Args>()
}
