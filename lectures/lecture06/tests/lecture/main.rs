//! Lecture 6's claim and command-line tests, in one test binary: the toy model's runs
//! (demo 3's ranks, demo 4's and demo 7's decoding on each model) are computed once per
//! process and shared by every test that prints or checks them, so the command-line
//! checks, the sweep and the claims on the figures decode each model once between them.
//!
//! Each module is one file of claims; `cargo test -p lecture06 --test lecture sweep::` runs
//! one of them. Demo 6's claims (`demo6.rs`) share the every-demo check's measurement of
//! this machine: none of them depends on the figures a busy host measures. The snapshot
//! (`output.rs`) keeps a binary of its own.

mod catalogue;
mod cli;
mod common;
mod demo6;
mod drafters;
mod exports;
mod figures;
mod files_given;
mod full_disk;
mod html;
mod inputs;
mod random_files;
mod random_flags;
mod refusals;
mod roofline;
mod run;
mod svg_read;
mod sweep;
mod toy;
mod trained;
mod validation_commands;
mod what_if;
