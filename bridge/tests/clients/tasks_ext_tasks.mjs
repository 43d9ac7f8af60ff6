#!/usr/bin/env node
// MCP's tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) through
// its own requester, `@modelcontextprotocol/ext-tasks` (npm, 0.2.2), against
// the bridge in front of a fake-unity serving
// bridge/tests/clients/slow-run-tests.toml (run-tests 12 s longer than usual).
//
//   node tasks_ext_tasks.mjs --modules DIR/node_modules --bridge PATH/unity-mcp-bridge --project DIR
//
// The TypeScript SDK v2 client (2.4.0) has no tasks runtime, and on a
// 2026-07-28 connection its callTool refuses `resultType: "task"`; ext-tasks
// is the way a TypeScript client takes tasks. It drives any
// `ConnectedMcpSessionPort`: here a raw one over the bridge's stdio (JSON
// lines, every request in the 2026-07-28 `_meta` envelope declaring the
// extension), which is all ext-tasks needs from an SDK. It checks that
// server/discover declares the extension; `compile` with task preference
// "require" (an immediate result is then an error) yields a task handle and
// settles completed; the slow `run-tests` settles completed with the
// fixture's 9 tests, polled by ext-tasks at the task's pollIntervalMs; a
// quick `get-logs` is immediate; a cancelled run-tests ends cancelled.
// Exit status 0 when every check passed; the last line is a summary.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    modules: { type: 'string' },
    bridge: { type: 'string' },
    project: { type: 'string' },
  },
});
// ext-tasks exports only an `import` condition: its files are imported by URL
// from the node_modules outside the source tree (target/mcp-clients).
const packageDir = path.join(path.resolve(args.modules), '@modelcontextprotocol', 'ext-tasks');
const extTasksVersion = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version;
const { withTasks, resultFromTaskOutcome } = await import(
  pathToFileURL(path.join(packageDir, 'dist', 'client', 'index.js')).href
);

const EXTENSION = 'io.modelcontextprotocol/tasks';
const VERSION = '2026-07-28';
const checks = { passed: 0, failed: 0 };
function check(condition, what) {
  if (condition) {
    checks.passed += 1;
  } else {
    checks.failed += 1;
    console.error('FAIL:', what);
  }
}
const clip = (value) => JSON.stringify(value ?? null).slice(0, 300);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The port: the bridge's stdio, one JSON-RPC message a line.
const child = spawn(args.bridge, ['--project', args.project, '--log-level', 'warn'], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const pending = new Map();
const listeners = new Set();
const sent = {}; // requests by method
const answers = []; // [method, result] of every tools/call
let nextId = 1;
readline.createInterface({ input: child.stdout }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id !== undefined && pending.has(message.id)) {
    const resolve = pending.get(message.id);
    pending.delete(message.id);
    resolve(message.error ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result });
  } else if (message.method && message.id === undefined) {
    for (const listener of listeners) listener(message);
  }
});
const envelope = (params = {}) => ({
  ...params,
  _meta: {
    ...(params._meta ?? {}),
    'io.modelcontextprotocol/protocolVersion': VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'ext-tasks-test', version: extTasksVersion },
    'io.modelcontextprotocol/clientCapabilities': {
      ...(params._meta?.['io.modelcontextprotocol/clientCapabilities'] ?? {}),
      extensions: { [EXTENSION]: {} },
    },
  },
});
const dispatch = (request) => new Promise((resolve) => {
  const id = nextId++;
  sent[request.method] = (sent[request.method] ?? 0) + 1;
  pending.set(id, (response) => {
    if (request.method === 'tools/call') answers.push([request.params?.name, response.result ?? response.error]);
    resolve(response);
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: request.method, params: envelope(request.params) })}\n`);
});

const figures = {};
let session;
try {
  const discovered = await dispatch({ method: 'server/discover' });
  const declared = discovered.result?.capabilities?.extensions?.[EXTENSION];
  check(JSON.stringify(declared) === '{}', `server/discover declares the extension: ${clip(discovered)}`);
  const port = {
    endpointId: 'unity-mcp-bridge-stdio',
    invalidated: false,
    taskCapabilities: declared !== undefined ? { generation: 'v2', capabilities: {} } : { generation: 'none' },
    dispatch,
    onServerRequest: () => () => {},
    onNotification: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onInvalidated: () => () => {},
  };
  session = withTasks(port);

  // compile, a task by the bridge's choice, required here.
  const compile = await session.callTool('compile', {}, { task: { preference: 'require' } });
  check(compile.kind === 'task' && typeof compile.handle?.taskId === 'string', `compile's handle: ${clip(compile.handle)}`);
  const compiled = await compile.settle();
  check(compiled.outcome.status === 'completed', `compile's task ended ${compiled.outcome.status}`);
  const compileResult = compiled.outcome.status === 'completed' ? resultFromTaskOutcome(compiled.outcome) : {};
  check(!compileResult.isError && compileResult.structuredContent?.ErrorCount === 0, `compile's result: ${clip(compileResult)}`);
  const handle = answers.find(([name]) => name === 'compile')?.[1];
  check(handle?.resultType === 'task' && handle.status === 'working' && handle.ttlMs === null && handle.pollIntervalMs === 1000,
    `compile was answered with a CreateTaskResult: ${clip(handle)}`);

  // A quick call is an immediate result.
  const logs = await session.callTool('get-logs', { LogType: 'Warning' });
  check(logs.kind === 'immediate', `get-logs is immediate (${logs.kind})`);
  const logsResult = resultFromTaskOutcome((await logs.settle()).outcome);
  check(logsResult.structuredContent?.TotalCount === 2, `get-logs returned ${clip(logsResult.structuredContent)}`);

  // The slow test run (12 s more), polled by ext-tasks to its end.
  const pollsBefore = sent['tasks/get'] ?? 0;
  const started = Date.now();
  const tests = await session.callTool('run-tests', {});
  check(tests.kind === 'task', `run-tests is a task (${tests.kind})`);
  const messages = new Set();
  const ran = await tests.settle({ onEvent: (event) => event.task?.statusMessage && messages.add(event.task.statusMessage) });
  figures.task = [(Date.now() - started) / 1000, (sent['tasks/get'] ?? 0) - pollsBefore, messages.size];
  check(ran.outcome.status === 'completed', `run-tests' task ended ${ran.outcome.status}: ${clip(ran.outcome.error?.message)}`);
  const testsResult = ran.outcome.status === 'completed' ? resultFromTaskOutcome(ran.outcome) : {};
  check(testsResult.structuredContent?.TestCount === 9, `run-tests through its task: ${clip(testsResult.structuredContent)}`);
  check(testsResult.isError === true && testsResult.structuredContent?.FailedCount === 1,
    'the fixture\'s failing test makes it an error result (a completed task)');
  check(figures.task[0] > 10 && figures.task[1] >= 10, `run-tests as a task: ${figures.task[0]} s, ${figures.task[1]} polls`);
  // The Editor's progress, as the task's statusMessage (no progress notifications on tasks).
  check([...messages].some((m) => /Working \(\d+ s\)/.test(m)), `progress as statusMessage: ${clip([...messages])}`);

  // A cancelled test run ends cancelled.
  const doomed = await session.callTool('run-tests', {}, { task: { preference: 'require' } });
  check(doomed.kind === 'task', `the second run-tests is a task (${doomed.kind})`);
  await sleep(1000);
  const cancelledAt = Date.now();
  await doomed.cancel();
  const stopped = await doomed.settle();
  figures.cancel = (Date.now() - cancelledAt) / 1000;
  check(stopped.outcome.status === 'cancelled', `the cancelled run-tests ended ${stopped.outcome.status}`);
  check((sent['tasks/cancel'] ?? 0) === 1, `one tasks/cancel sent (${sent['tasks/cancel']})`);
  // As the bridge keeps it.
  const kept = await dispatch({ method: 'tasks/get', params: { taskId: doomed.handle?.taskId } });
  check(kept.result?.status === 'cancelled' && kept.result?.resultType === 'complete', `tasks/get of it: ${clip(kept)}`);
} catch (e) {
  check(false, `the session failed: ${e?.stack ?? e}`);
} finally {
  await session?.close().catch(() => {});
  child.stdin.end();
}
if (figures.task) {
  console.log(`run-tests (12 s slower) as a task: ${figures.task[0].toFixed(1)} s, ${figures.task[1]} tasks/get polls, ${figures.task[2]} status messages seen`);
}
if (figures.cancel !== undefined) console.log(`tasks/cancel: settled cancelled ${figures.cancel.toFixed(1)} s after it`);
console.log(`ext-tasks ${extTasksVersion} requester (spoke ${VERSION}): ${checks.passed} checks passed, ${checks.failed} failed`);
process.exit(checks.failed ? 1 : 0);
