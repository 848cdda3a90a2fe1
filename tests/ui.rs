//! Compile errors: every check of `datalog!` has a case here with its reviewed `.stderr`;
//! and valid programs at the front end's edges (`ui/pass`), which must compile and run.
//! Regenerate after a deliberate message change with `TRYBUILD=overwrite cargo test --test ui`,
//! then review the diff.

#[test]
fn compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
