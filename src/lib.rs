//! placeholder docs
pub use dred_macros::datalog;
pub use dred_runtime as runtime;
pub use dred_runtime::{Batch, Program, Trace, UpdateReport};
