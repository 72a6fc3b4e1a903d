fn main() -> std::process::ExitCode {
    triage::cli::main::<triage::cmd::recv::Args>()
}
