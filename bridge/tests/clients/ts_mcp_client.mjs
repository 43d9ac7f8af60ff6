#!/usr/bin/env node
// An independently written MCP client (the official TypeScript SDK v2,
// `@modelcontextprotocol/client` on npm) driving the bridge over stdio
// against a running fake-unity: lists the tools and calls each one, checking
// the results; on a 2026-07-28 connection it also opens a
// `subscriptions/listen` for list changes and closes it.
//
//   node ts_mcp_client.mjs --modules DIR/node_modules --bridge PATH/unity-mcp-bridge --project DIR \
//       [--mode legacy|auto|2026-07-28] [--expect-version VERSION] [--editor uloop-3]
//
// `--editor uloop-3`: fake-unity plays uLoopMCP 3 (v3-beta c50f54c, on its
// Unix socket or named pipe, found by the bridge from the project folder):
// its catalogue, and calls checked against the fixture project as that model
// serves it.
//
// The SDK's default is `legacy` (initialize); `auto` probes with
// server/discover (on a short-lived sibling process) and falls back; a
// version pins it (no fallback). Exit status 0 when every check passed; the
// last line is a summary.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    modules: { type: 'string' },
    bridge: { type: 'string' },
    project: { type: 'string' },
    mode: { type: 'string', default: 'legacy' },
    'expect-version': { type: 'string', default: '2025-11-25' },
    editor: { type: 'string', default: 'package' },
  },
});
// The SDK is installed outside the source tree (target/mcp-clients).
const require = createRequire(path.join(path.resolve(args.modules), 'resolve-from-here.js'));
const { Client } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');
// (its package.json is not exported: read it beside the entry point)
const sdkVersion = JSON.parse(
  readFileSync(path.join(path.dirname(require.resolve('@modelcontextprotocol/client')), '..', 'package.json'), 'utf8'),
).version;

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

const ULOOP3_TOOLS = [
  'bridge-status', 'clear-console', 'compile', 'control-play-mode', 'execute-dynamic-code', 'find-game-objects',
  'get-hierarchy', 'get-logs', 'record-input', 'replay-input', 'run-tests', 'screenshot', 'simulate-keyboard',
  'simulate-mouse-input', 'simulate-mouse-ui', 'wait-for-editor-ready',
];
const ULOOP3_CALLS = [
  ['wait-for-editor-ready', { timeout_seconds: 10 }, (s) => s.ready === true],
  ['bridge-status', {}, (s) => s.connected === true && s.port === null
    && /^(unix:\/tmp\/uloop\/UnityCliLoop-[0-9a-f]{16}\.sock|pipe:\\\\\.\\pipe\\uloop-UnityCliLoop-[0-9a-f]{16})$/.test(s.endpoint)],
  ['get-logs', { LogType: 'Error' }, (s) => s.TotalCount === 2 && s.Ver === '3.0.0-beta.1'],
  ['find-game-objects', { NamePattern: 'Player' }, (s) => s.results?.[0]?.name === 'Player'],
  ['compile', {}, (s) => s.Success === true && s.ErrorCount === 0],
  // Paused, not playing: EditMode tests (run-tests below) refuse to run in play mode, as in Unity.
  ['control-play-mode', { Action: 'Pause' }, (s) => s.IsPaused === true],
  ['execute-dynamic-code', { Code: 'return "from " + "typescript";' }, (s) => s.Result === 'from typescript'],
  ['screenshot', {}, (s) => s.ScreenshotCount === 1],
  ['clear-console', {}, (s) => s.Success === true],
];

async function runUloop3(client) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(ULOOP3_TOOLS), `tool list ${names}`);
  for (const [name, toolArgs, ok] of ULOOP3_CALLS) {
    const result = await client.callTool({ name, arguments: toolArgs });
    check(!result.isError, `${name} is not an error: ${clip(result.content)}`);
    check(ok(result.structuredContent ?? {}), `${name} returned ${clip(result.structuredContent)}`);
  }
  const failing = await client.callTool({ name: 'run-tests', arguments: {} });
  check(failing.isError === true && failing.structuredContent?.FailedCount === 1, `a failing test run: ${clip(failing)}`);
  const invalid = await client.callTool({ name: 'get-logs', arguments: { MaxCount: 'many' } });
  check(invalid.isError === true && invalid.content[0].text.includes('MaxCount'), `invalid arguments: ${clip(invalid)}`);
  try {
    await client.callTool({ name: 'focus-window', arguments: {} }); // 2.x's, gone from v3
    check(false, 'a tool v3 does not have must be a JSON-RPC error');
  } catch (e) {
    check(String(e).includes('Unknown tool'), `unknown tool error: ${e}`);
  }
}

async function run() {
  const mode = args.mode === 'legacy' || args.mode === 'auto' ? args.mode : { pin: args.mode };
  const client = new Client({ name: 'ts-sdk-v2-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StdioClientTransport({
    command: args.bridge,
    args: ['--project', args.project, '--log-level', 'warn'],
    stderr: 'inherit',
  });
  await client.connect(transport);
  const version = client.getNegotiatedProtocolVersion();
  spoke = version;
  try {
    check(version === args['expect-version'], `mode ${args.mode}: protocol version ${version}, expected ${args['expect-version']}`);
    const server = client.getServerVersion();
    // Pinned, the SDK may take the server's identity from server/discover's _meta or not at all.
    if (server !== undefined || typeof mode === 'string') {
      check(server?.name === 'unity-mcp-bridge', `server name ${server?.name}`);
    }
    if (args.editor === 'uloop-3') {
      await runUloop3(client);
      return;
    }

    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    const expected = [
      'bridge-status', 'clear-console', 'compile', 'control-play-mode', 'execute-dynamic-code', 'execute-menu-item',
      'find-game-objects', 'focus-window', 'get-hierarchy', 'get-logs', 'get-menu-items', 'get-provider-details',
      'run-tests', 'screenshot', 'unity-search', 'wait-for-editor-ready',
    ];
    check(JSON.stringify(names) === JSON.stringify(expected), `tool list ${names}`);
    for (const tool of tools) {
      check(tool.inputSchema?.type === 'object', `${tool.name} input schema is an object`);
    }

    if (version === '2026-07-28') {
      // list_changed in 2026-07-28 comes on a subscription, acknowledged first.
      const subscription = await client.listen({ toolsListChanged: true });
      check(subscription.honoredFilter.toolsListChanged === true, `listen honored ${clip(subscription.honoredFilter)}`);
      await subscription.close();
      check((await subscription.closed) === 'local', 'the subscription closed locally');
    }

    const calls = [
      ['wait-for-editor-ready', { timeout_seconds: 10 }, (s) => s.ready === true],
      ['bridge-status', {}, (s) => s.connected === true],
      ['get-logs', { LogType: 'Error' }, (s) => s.TotalCount === 2],
      ['find-game-objects', { RequiredComponents: ['EnemyAI'] }, (s) => s.totalFound === 2],
      ['get-hierarchy', { RootPath: 'Environment' }, (s) => s.context?.nodeCount === 6],
      ['unity-search', { SearchQuery: 't:SceneAsset' }, (s) => s.TotalCount === 2],
      ['get-provider-details', { ActiveOnly: true }, (s) => s.TotalCount === 4],
      ['get-menu-items', { FilterText: 'Tools/Fixture/Log', FilterType: 'startswith' }, (s) => s.FilteredCount === 2],
      ['execute-menu-item', { MenuItemPath: 'Tools/Fixture/Log Warning' }, (s) => s.Success === true],
      ['execute-dynamic-code', { Code: 'return "from " + "typescript";' }, (s) => s.Result === 'from typescript'],
      ['focus-window', {}, (s) => s.Success === true],
      // compile before Play: entering play mode reloads the domain just
      // after its answer (Unity's default), and a compile that reaches the
      // Editor first is cut off by that reload (honestly "may have run").
      ['compile', {}, (s) => s.ErrorCount === 0],
      ['control-play-mode', { Action: 'Play' }, (s) => s.IsPlaying === true],
      ['screenshot', { ResolutionScale: 0.5 }, (s) => s.ScreenshotCount === 1],
      ['clear-console', { AddConfirmationMessage: false }, (s) => s.Success === true],
    ];
    for (const [name, toolArgs, ok] of calls) {
      const result = await client.callTool({ name, arguments: toolArgs });
      const structured = result.structuredContent ?? {};
      check(!result.isError, `${name} is not an error: ${clip(result.content)}`);
      check(ok(structured), `${name} returned ${clip(structured)}`);
      const text = result.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
      check(JSON.stringify(JSON.parse(text)) === JSON.stringify(structured), `${name} text block holds the structured content`);
    }

    // Progress reaches a call that asks for it, in either era.
    const progress = [];
    const tests = await client.callTool(
      { name: 'run-tests', arguments: { FilterType: 'assembly', FilterValue: 'FixtureProject.Tests.PlayMode', TestMode: 'PlayMode' } },
      { onprogress: (p) => progress.push(p) },
    );
    check(!tests.isError && tests.structuredContent?.PassedCount === 2, `run-tests returned ${clip(tests.structuredContent)}`);
    check(progress.length >= 1, `run-tests sent ${progress.length} progress notifications`);

    const image = await client.callTool({ name: 'screenshot', arguments: { ResolutionScale: 0.25, IncludeImageData: true } });
    check(JSON.stringify(image.content.map((c) => c.type)) === '["text","image"]', `screenshot content ${clip(image.content.map((c) => c.type))}`);
    const invalid = await client.callTool({ name: 'get-logs', arguments: { MaxCount: 'many' } });
    check(invalid.isError === true && invalid.content[0].text.includes('MaxCount'), `invalid arguments: ${clip(invalid)}`);
    try {
      await client.callTool({ name: 'make-coffee', arguments: {} });
      check(false, 'an unknown tool must be a JSON-RPC error');
    } catch (e) {
      check(String(e).includes('Unknown tool'), `unknown tool error: ${e}`);
    }
  } finally {
    await client.close();
  }
}

let spoke;
try {
  await run();
} catch (e) {
  check(false, `the session failed: ${e?.stack ?? e}`);
}
const against = args.editor === 'uloop-3' ? ', uLoopMCP 3' : '';
console.log(`typescript sdk ${sdkVersion} client (mode ${args.mode}, spoke ${spoke}${against}): ${checks.passed} checks passed, ${checks.failed} failed`);
process.exit(checks.failed ? 1 : 0);
