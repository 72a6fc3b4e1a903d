fn main() -> std::process::ExitCode {
    triage::cmd::main::<triage::cmd::alert::Args>()
}
