//! One editor-link connection (placeholder, filled in next).
