// Protocol tests: the extension's view of the node's LSP surface (docs/internal-api.md, "LSP custom
// surface") against the real `contenox lsp --stdio` and the real default model.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CancellationTokenSource, ResponseError } from 'vscode-jsonrpc/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isExplain, Methods, SEGMENT_KINDS, type CacheStatus, type ChatChunk, type ChatResult, type Explain, type ModelChoice,
  type ThreadSummary, type WorkspacePins,
} from '../../src/protocol';
import { LspSession, NodeHome } from './harness';

let home: NodeHome;
let lsp: LspSession;
let capabilities: Record<string, unknown>;
let firstTurn: ChatResult;

function expectExplain(explain: Explain): void {
  // The node's JSON has exactly the shape the panel's guard accepts (notes, retrieved, citations).
  expect(isExplain(explain)).toBe(true);
  expect(explain.model).toBe('smollm2-135m');
  expect(explain.segments.length).toBeGreaterThan(0);
  const kinds = explain.segments.map((s) => s.kind);
  expect(kinds[0]).toBe('system');
  expect(kinds).toContain('user');
  for (const kind of kinds) expect(SEGMENT_KINDS).toContain(kind);
  let tokens = 0;
  for (const s of explain.segments) {
    expect(s.cached + s.new).toBe(s.tokens);
    tokens += s.tokens;
  }
  expect(explain.totals.tokens).toBe(tokens);
  expect(explain.totals.cached + explain.totals.new).toBe(explain.totals.tokens);
}

async function chat(chatId: string, prompt: string, extra: Record<string, unknown> = {}) {
  const chunks: string[] = [];
  const states: CacheStatus[] = [];
  const offChunk = lsp.on('$/contenox/chatChunk', (p) => {
    const c = p as ChatChunk;
    if (c.chatId === chatId) chunks.push(c.text);
  });
  const offStatus = lsp.on('$/contenox/cacheStatus', (p) => states.push(p as CacheStatus));
  try {
    const result = await lsp.connection.sendRequest<ChatResult>('contenox/chat', { chatId, prompt, ...extra });
    // The final idle status follows the response on the same stream: give it a moment to arrive.
    await new Promise((r) => setTimeout(r, 200));
    return { result, chunks, states };
  } finally {
    offChunk();
    offStatus();
  }
}

beforeAll(async () => {
  home = new NodeHome();
  lsp = LspSession.start(home.env, home.workspace);
  const init = await lsp.connection.sendRequest<{ capabilities: Record<string, unknown> }>('initialize', {
    processId: process.pid,
    rootUri: home.uri(''),
    workspaceFolders: [{ uri: home.uri(''), name: 'ws' }],
    capabilities: { textDocument: { hover: { contentFormat: ['markdown', 'plaintext'] } }, window: { workDoneProgress: true } },
    clientInfo: { name: 'contenox-vscode-protocol-test' },
  });
  capabilities = init.capabilities;
  await lsp.connection.sendNotification('initialized', {});
});

afterAll(async () => {
  await lsp?.close();
  home?.stopNode();
});

describe('contenox lsp --stdio', () => {
  it('advertises hover, code actions and the five commands', () => {
    expect(capabilities.hoverProvider).toBeTruthy();
    expect(capabilities.codeActionProvider).toBeTruthy();
    const commands = (capabilities.executeCommandProvider as { commands: string[] }).commands;
    for (const c of ['contenox.explainSelection', 'contenox.findRelated', 'contenox.askSelection', 'contenox.pin', 'contenox.unpin']) {
      expect(commands).toContain(c);
    }
  });

  it('explainContext is null before the first turn', async () => {
    expect(await lsp.connection.sendRequest('contenox/explainContext', { uri: home.uri('util.py') })).toBeNull();
  });

  it('contenox/chat streams chatChunk notifications and returns {text, explain}', async () => {
    const { result, chunks, states } = await chat('c-1', 'In one sentence: what does helper do?', { uri: home.uri('util.py') });
    firstTurn = result;
    expect(typeof result.text).toBe('string');
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.join('')).toBe(result.text);
    expectExplain(result.explain!);
    // The status bar sees the turn move through prefill and end idle with the turn's numbers.
    const seen = states.map((s) => s.state);
    expect(seen).toContain('prefill');
    const last = states.at(-1)!;
    expect(last.state).toBe('idle');
    expect(last.promptTokens).toBe(result.explain!.totals.tokens);
    expect(last.cachedTokens).toBe(result.explain!.totals.cached);
    expect(last.newTokens).toBe(result.explain!.totals.new);
    expect(typeof last.hitPct).toBe('number');
  });

  it('explainContext returns the last turn', async () => {
    const explain = await lsp.connection.sendRequest<Explain>('contenox/explainContext', { uri: home.uri('util.py') });
    expect(explain).toEqual(firstTurn.explain);
  });

  it('a follow-up turn reuses the cached prefix', async () => {
    const { result } = await chat('c-2', 'And what does run return?', { uri: home.uri('main.py') });
    expectExplain(result.explain!);
    expect(result.explain!.turn).toBeGreaterThan(firstTurn.explain!.turn);
    expect(result.explain!.totals.cached).toBeGreaterThan(0);
    expect(result.explain!.segments[0]!.cached).toBe(result.explain!.segments[0]!.tokens);
  });

  it('$/cancelRequest stops a running chat with RequestCancelled', async () => {
    const source = new CancellationTokenSource();
    const off = lsp.on('$/contenox/cacheStatus', (p) => {
      if ((p as CacheStatus).state === 'prefill') source.cancel();
    });
    const chunks: string[] = [];
    const offChunk = lsp.on('$/contenox/chatChunk', (p) => chunks.push((p as ChatChunk).text));
    try {
      const outcome = await lsp.connection
        .sendRequest('contenox/chat', { chatId: 'c-cancel', prompt: 'Write a very long essay about helper, at least 500 words.' }, source.token)
        .then(() => null, (err: unknown) => err);
      expect(outcome).toBeInstanceOf(ResponseError);
      expect((outcome as ResponseError<unknown>).code).toBe(-32800);
      expect(source.token.isCancellationRequested).toBe(true);
    } finally {
      off();
      offChunk();
    }
    // The connection (and node) still serve requests after a cancel.
    const explain = await lsp.connection.sendRequest<Explain | null>('contenox/explainContext', { uri: home.uri('util.py') });
    expect(explain).not.toBeNull();
  });

  it('hover shows the explain-context markdown for a symbol', async () => {
    const uri = home.uri('util.py');
    const text = fs.readFileSync(path.join(home.workspace, 'util.py'), 'utf8');
    await lsp.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
    const hover = await lsp.connection.sendRequest<{ contents: { kind: string; value: string } } | null>(
      'textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 6 } });
    expect(hover).not.toBeNull();
    expect(hover!.contents.kind).toBe('markdown');
    expect(hover!.contents.value).toContain('helper');
    expect(hover!.contents.value).toMatch(/cached/i);
  });

  it('code actions on a selection carry the chat commands with {uri, range}', async () => {
    const uri = home.uri('util.py');
    const range = { start: { line: 0, character: 0 }, end: { line: 2, character: 16 } };
    const actions = await lsp.connection.sendRequest<{ title: string; command: { command: string; arguments: unknown[] } }[]>(
      'textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [] } });
    const byCommand = new Map(actions.map((a) => [a.command.command, a]));
    for (const c of ['contenox.explainSelection', 'contenox.findRelated', 'contenox.askSelection']) {
      const action = byCommand.get(c);
      expect(action).toBeDefined();
      expect(action!.command.arguments).toEqual([{ uri, range }]);
    }
  });

  it('explainSelection with a chatId streams into that chat and returns {text, explain}', async () => {
    const uri = home.uri('util.py');
    const range = { start: { line: 0, character: 0 }, end: { line: 2, character: 16 } };
    const chunks: string[] = [];
    const off = lsp.on('$/contenox/chatChunk', (p) => { if ((p as ChatChunk).chatId === 'c-sel') chunks.push((p as ChatChunk).text); });
    try {
      const result = await lsp.connection.sendRequest<ChatResult>('workspace/executeCommand', {
        command: 'contenox.explainSelection', arguments: [{ uri, range, chatId: 'c-sel' }],
      });
      expect(chunks.join('')).toBe(result.text);
      expectExplain(result.explain!);
      expect(result.explain!.segments.map((s) => s.kind)).toContain('user');
    } finally {
      off();
    }
  });

  it('findRelated lists the definition of the selected symbol', async () => {
    const uri = home.uri('main.py');
    const range = { start: { line: 4, character: 11 }, end: { line: 4, character: 17 } };
    const result = await lsp.connection.sendRequest<{ related: { name?: string; path?: string }[] }>('workspace/executeCommand', {
      command: 'contenox.findRelated', arguments: [{ uri, range }],
    });
    expect(result.related.some((r) => r.name === 'helper' && String(r.path).endsWith('util.py'))).toBe(true);
  });

  it('pin and unpin a file; the pins view lists it; threads and models for the pickers', async () => {
    const uri = home.uri('main.py');
    const pinned = await lsp.connection.sendRequest<Record<string, string>>('workspace/executeCommand', { command: 'contenox.pin', arguments: [uri] });
    expect(pinned.pinned).toMatch(/main\.py$/);
    const listed = await lsp.connection.sendRequest<WorkspacePins[]>(Methods.pins, {});
    expect(listed.flatMap((w) => w.pins.map((p) => p.path))).toEqual(['main.py']);
    const threads = await lsp.connection.sendRequest<ThreadSummary[]>(Methods.threads, {});
    expect(threads.length).toBeGreaterThan(0);
    expect(threads.every((t) => t.turns > 0 && typeof t.title === 'string')).toBe(true);
    const models = await lsp.connection.sendRequest<ModelChoice>(Methods.models, {});
    expect(models.installed).toContain(models.current);
    const unpinned = await lsp.connection.sendRequest<Record<string, string>>('workspace/executeCommand', { command: 'contenox.unpin', arguments: [uri] });
    expect(unpinned.unpinned).toMatch(/main\.py$/);
  });
});
