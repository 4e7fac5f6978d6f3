//! The `evalctl` binary: parse the command line, run, return an exit status.

use std::process::ExitCode;

fn main() -> ExitCode {
    evalctl::run_cli(std::env::args_os()).into()
}
