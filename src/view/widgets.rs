//! Reusable pieces shared by the views.

pub mod table;
