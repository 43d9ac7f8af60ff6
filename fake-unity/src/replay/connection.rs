//! A replay's connections: each frame a client sends goes to the engine,
//! which plays what the recording has after it.

use super::*;

/// The replay's engine, behind its lock, is what answers the server's
/// connections.
impl Responder for Mutex<Engine> {
    fn serve(self: Arc<Self>, accepted: Accepted) -> impl Future<Output = ()> + Send + 'static {
        serve(accepted.stream, accepted.peer, self)
    }
}

async fn serve(stream: crate::server::Stream, peer: crate::server::Peer, engine: Arc<Mutex<Engine>>) {
    let Connection { sender, mut receiver, writer } = stream.connection(Options::editor(DEFAULT_RESPONSE_LIMIT));
    let (live_no, start) = {
        let mut engine = lock(&engine);
        if engine.away {
            // Between the recorded Editor going away and the listener closing.
            return;
        }
        let plays = (engine.next_live as usize).checked_sub(1).filter(|i| *i < engine.script.conns.len());
        if plays.is_none() {
            // A connection the recording does not have: reported once, closed.
            engine.extra_connections += 1;
            if engine.extra_connections == 1 {
                let (path, port) = (engine.config.path.display().to_string(), engine.port);
                let mismatch = Mismatch {
                    connection: engine.next_live,
                    recorded_connection: None,
                    frame: 0,
                    received: json!(null),
                    expected: None,
                    reason: format!(
                        "connection {} is not in the recording, which has {} connection(s)",
                        engine.next_live,
                        engine.script.conns.len()
                    ),
                    first_difference: None,
                    candidates: Vec::new(),
                    rerun: engine.config.command_line(port),
                    answered_with: "closing the connection".into(),
                };
                eprint!("{}", mismatch.report(&path));
                engine.mismatches.push(mismatch);
            }
            return;
        }
        let live_no = engine.next_live;
        engine.next_live += 1;
        engine.live.insert(live_no, Live { plays, sender: sender.clone(), frames: 0, going_away: false });
        tracing::info!(live = live_no, %peer, plays = ?plays.map(|c| engine.script.conns[c].conn), "client connected");
        (live_no, plays.map(|c| (c, engine.script.conns[c].start.clone())))
    };
    if let Some((conn, emissions)) = start {
        run_emissions(engine.clone(), live_no, conn, emissions, None);
    }
    loop {
        let received = tokio::select! {
            _ = sender.closed() => break,
            received = receiver.recv() => received,
        };
        match received {
            Received::Body(body) => received_frame(&engine, live_no, &body),
            Received::TooLarge { size, .. } => tracing::warn!(size, "a client frame over the limit was dropped"),
            Received::Closed | Received::Lost(_) | Received::Broken(_) => {
                tracing::debug!("client connection ended");
                break;
            }
        }
    }
    // What is queued goes out first (the recorded shutdown notification).
    sender.end(Ending::Graceful);
    let _ = writer.await;
    let (mut read, _) = receiver.into_inner();
    crate::server::linger(&mut read).await;
    let commands = {
        let mut engine = lock(&engine);
        engine.live.remove(&live_no);
        engine.commands.clone()
    };
    tracing::info!(live = live_no, "client disconnected");
    let _ = commands.send(Command::Check);
}

/// One frame from a live client.
pub(super) fn received_frame(engine: &Arc<Mutex<Engine>>, live_no: u64, body: &[u8]) {
    let payload = match serde_json::from_slice::<Value>(body) {
        Ok(message) => Payload::Message(message),
        Err(_) => Payload::Raw(body.to_vec()),
    };
    let mut state = lock(engine);
    if let Some(live) = state.live.get_mut(&live_no) {
        live.frames += 1;
    }
    match state.pair(live_no, &payload) {
        Pairing::Matched(c, i) => {
            state.used[c][i] = true;
            let expected = state.script.conns[c].expected[i].clone();
            if expected.is_request() {
                state.matched += 1;
            }
            let live_id = match &payload {
                Payload::Message(m) => m.get("id").cloned().filter(|id| !id.is_null()),
                Payload::Raw(_) => None,
            };
            if let (Some(recorded), Some(live)) = (expected.message().and_then(|m| m.get("id")), &live_id) {
                state.ids.insert(recorded.to_string(), live.clone());
            }
            let mut emissions: Vec<Emission> =
                expected.response.iter().cloned().chain(expected.then.iter().cloned()).collect();
            emissions.sort_by_key(|e| (e.delay_ms, e.seq));
            drop(state);
            run_emissions(engine.clone(), live_no, c, emissions, live_id);
        }
        Pairing::Ignored => {}
        Pairing::Held => {
            tracing::info!(
                live = live_no,
                "a request arrived as the recorded Editor goes away: no answer, as in Unity"
            );
        }
        Pairing::Mismatch(_) if state.background_answer(live_no, &payload).is_some() => {
            let Some((c, mut response)) = state.background_answer(live_no, &payload) else { return };
            // A repeat is not in the recording's order: a client gone
            // before it cuts nothing short.
            response.seq = u64::MAX;
            state.background_repeats += 1;
            let live_id = match &payload {
                Payload::Message(m) => m.get("id").cloned().filter(|id| !id.is_null()),
                Payload::Raw(_) => None,
            };
            tracing::info!(live = live_no, "a background request beyond the recorded ones answered again");
            drop(state);
            run_emissions(engine.clone(), live_no, c, vec![response], live_id);
        }
        Pairing::Mismatch(_) if state.answers_ping(&payload) => {
            let Payload::Message(m) = &payload else { return };
            let Some(id) = Id::from_value(&m["id"]).ok().flatten() else { return };
            let message = m.pointer("/params/Message").and_then(Value::as_str).unwrap_or("");
            let result = json!({"Message": format!("Unity MCP Bridge received: {message}")});
            state.pings_answered += 1;
            tracing::info!(live = live_no, "an unrecorded ping answered");
            if let Some(live) = state.live.get(&live_no) {
                live.sender.send_message(&Message::Response(Response::ok(id, result)), Some(methods::PING));
            }
        }
        Pairing::Mismatch(mismatch) => {
            let path = state.config.path.display().to_string();
            eprint!("{}", mismatch.report(&path));
            let on_unexpected = state.config.on_unexpected;
            let live = state.live.get(&live_no).map(|l| l.sender.clone());
            state.mismatches.push(*mismatch);
            drop(state);
            let Some(sender) = live else { return };
            match (on_unexpected, &payload) {
                (OnUnexpected::Error, Payload::Message(m)) if m.get("method").is_some() && m.get("id").is_some() => {
                    let id = Id::from_value(&m["id"]).ok().flatten();
                    let error = ErrorObject::new(
                        ErrorKind::InternalError,
                        "fake-unity replay: this request is not in the transcript (see the replay's mismatch report)",
                    );
                    sender.send_message(&Message::Response(Response::error(id, error)), None);
                }
                (OnUnexpected::Error, _) => {}
                (OnUnexpected::Close, _) => sender.end(Ending::Graceful),
            }
        }
    }
}

/// Carries out a matched frame's emissions at their (scaled) delays.
pub(super) fn run_emissions(
    engine: Arc<Mutex<Engine>>,
    live_no: u64,
    conn: usize,
    emissions: Vec<Emission>,
    reply_to: Option<Value>,
) {
    if emissions.is_empty() {
        return;
    }
    {
        let mut state = lock(&engine);
        state.running += 1;
        let leaves = emissions.iter().any(|e| matches!(e.action, Action::Close { away: Some(_) }));
        if let Some(live) = state.live.get_mut(&live_no).filter(|_| leaves) {
            live.going_away = true;
        }
    }
    tokio::spawn(async move {
        let mut elapsed = 0u64;
        for emission in emissions {
            let wait = lock(&engine).scaled(emission.delay_ms.saturating_sub(elapsed));
            elapsed = emission.delay_ms;
            tokio::time::sleep(wait).await;
            let mut state = lock(&engine);
            let Some(live) = state.live.get(&live_no) else {
                // The client left first: nothing recorded after this can happen.
                let cut = &mut state.cut_at[conn];
                *cut = Some(cut.map_or(emission.seq, |c| c.min(emission.seq)));
                break;
            };
            let sender = live.sender.clone();
            match emission.action {
                Action::Send(Payload::Message(message)) => {
                    let is_response =
                        message.get("method").is_none() && message.get("id").is_some_and(|id| !id.is_null());
                    let reply = if is_response { reply_to.as_ref() } else { None };
                    let message = state.live_message(message, reply);
                    sender.send(Outgoing::body(message.to_string()));
                }
                Action::Send(Payload::Raw(bytes)) => {
                    sender.send(Outgoing::body(bytes));
                }
                Action::Close { away } => {
                    let conn_period = state.script.conns[conn].period;
                    match away.filter(|_| conn_period == state.period && !state.away) {
                        Some(away) => {
                            // No connection is accepted from now on; the
                            // driver closes them all and stops listening.
                            tracing::info!(quit = away.quit, "the recorded Editor goes away");
                            state.away = true;
                            let _ = state.commands.send(Command::Away { away });
                        }
                        None => sender.end(Ending::Graceful),
                    }
                }
            }
        }
        lock(&engine).running -= 1;
    });
}
