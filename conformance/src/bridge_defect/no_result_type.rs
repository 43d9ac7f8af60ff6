//! Leaves `resultType` out of its results.

use serde_json::Value;

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct NoResultType;

impl Breaks for NoResultType {
    fn bridge_message(&self, message: &mut Value, _: &Answering<'_>, _: &Relay) -> Flow {
        if let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) {
            result.remove("resultType");
        }
        Flow::Pass
    }
}
