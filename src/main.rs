fn main() -> std::process::ExitCode {
    rgd::cli::main()
}
