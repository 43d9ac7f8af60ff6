//! Integration tests of fake-unity over real TCP, compiled as one binary.

mod support;

mod bad_input;
mod cli;
mod control_client;
mod crash_and_hang;
mod faults;
mod fixture_model;
mod lifecycle;
mod protocol;
mod proxy;
mod replay;
mod tools;
