// Entry point: starts `contenox lsp` through vscode-languageclient (stdio), wires the chat panel,
// the cache-hit status bar, inline completions (middleware + toggle), code-action commands and pin/unpin.

import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  State,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { ALLOW_CHECK, allowCheckAfterAsking, editorAsk } from './allowCheck';
import {
  FocusTracker, TerminalRuns, followChat, readAnticipateEnabled, trackEditors, type ShellEvents,
} from './anticipate';
import { ChatPanel } from './chatPanel';
import {
  RUN_COMMAND,
  RUN_COMMAND_CAPABILITY,
  editorRunner,
  runCommandAfterAsking,
  type RunCommandParams,
} from './runCommand';
import type { ChatBackend } from './chatSession';
import { errorMessage } from './chatSession';
import { INSTALL_COMMAND, missingMessage, resolveExecutable } from './executable';
import {
  CompletionToggle,
  TOGGLE_COMMAND,
  inlineCompletionMiddleware,
  readInlineSettings,
  toggleInlineCompletions,
} from './inlineCompletions';
import {
  CHAT_COMMANDS,
  Methods,
  ServerCommands,
  type CacheStatus,
  type ChatChunk,
  type ChatProgress,
  type ChatTool,
  type ChatResult,
  type CompletionInfoParams,
  type Exchange,
  type ModelChoice,
  type ThreadSummary,
  type WorkspacePins,
  type Explain,
} from './protocol';
import { registerApplyPreview, trackLastEditor } from './codeActions';
import { fileToPin, pinnedPaths, PinsView, PINNED_CONTEXT } from './pinsView';
import { askQuestion, kindSelectionActions, withQuestion } from './selectionActions';
import { EXPLAIN_COMMAND, StatusBar } from './statusBar';
import { statusForError } from './statusView';
import { TurnNoteStore } from './turnNotes';

const COMMAND_LABELS: Record<string, string> = {
  [ServerCommands.explainSelection]: 'Explain Selection',
  [ServerCommands.findRelated]: 'Find Related Code',
  [ServerCommands.askSelection]: 'Ask About Selection',
};

let client: LanguageClient | undefined;

function toLspRange(range: vscode.Range): { start: { line: number; character: number }; end: { line: number; character: number } } {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function selectionArgs(): { uri: string; range: ReturnType<typeof toLspRange>; text: string } | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  return {
    uri: editor.document.uri.toString(),
    range: toLspRange(editor.selection),
    text: editor.document.getText(editor.selection),
  };
}

/** The document `contenox/completionInfo` is asked about: the active editor's, else the workspace folder. */
function completionInfoParams(): CompletionInfoParams {
  const uri = vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  return { uri: uri?.toString() ?? '' };
}

function labelFor(command: string, args: unknown[]): string {
  const base = COMMAND_LABELS[command] ?? command;
  const first = args[0] as { uri?: string; range?: { start: { line: number }; end: { line: number } }; prompt?: string } | undefined;
  if (first?.uri && first.range) {
    const file = first.uri.split('/').pop() ?? first.uri;
    return `${base}: ${file}:${first.range.start.line + 1}-${first.range.end.line + 1}` +
      (first.prompt ? ` — ${first.prompt}` : '');
  }
  return base;
}

/** workspaceState key of the chat panel's thread. */
const CHAT_THREAD_KEY = 'contenox.chatThread';
/** workspaceState key of the last turn's cache status (the status item shows it again after a reload). */
const LAST_TURN_KEY = 'contenox.lastTurn';

/** Settled once the first start of the language client has (or has not) connected. */
let started: Promise<void> = Promise.resolve();

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const statusBar = new StatusBar({
    get: () => context.workspaceState.get<unknown>(LAST_TURN_KEY),
    set: (status) => void context.workspaceState.update(LAST_TURN_KEY, status),
  });
  const completionToggle = new CompletionToggle();
  context.subscriptions.push(statusBar, completionToggle);

  const backend: ChatBackend = {
    chat: async (params, token) => {
      if (!client) throw new Error('The Contenox node is not connected.');
      return client.sendRequest<ChatResult | null>(Methods.chat, params, token);
    },
    executeCommand: async (command, args, token) => {
      if (!client) throw new Error('The Contenox node is not connected.');
      return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token);
    },
    explainContext: async (uri) => {
      if (!client) throw new Error('The Contenox node is not connected.');
      return client.sendRequest<Explain | null>(Methods.explainContext, uri ? { uri } : {});
    },
    history: async (thread) => {
      await started; // a panel restored with the window asks before the node is connected
      if (!client) return [];
      return client.sendRequest<Exchange[]>(Methods.history, { thread });
    },
    threads: async () => {
      if (!client) return [];
      return client.sendRequest<ThreadSummary[]>(Methods.threads, {});
    },
    resolveBlock: async (params) => {
      if (!client) throw new Error('The Contenox node is not connected.');
      return client.sendRequest<unknown>(Methods.resolveBlock, params);
    },
  };
  const panel = new ChatPanel(context.extensionUri, backend, (err) => {
    const status = statusForError(err);
    if (status) statusBar.update(status);
  });
  context.subscriptions.push(panel, trackLastEditor(), registerApplyPreview());
  // The panel's thread survives a window restart (New chat / Switch Chat Thread choose another).
  const savedThread = context.workspaceState.get<string>(CHAT_THREAD_KEY);
  if (typeof savedThread === 'string' && savedThread) panel.session.thread = savedThread;
  panel.session.rememberThread = (thread) => void context.workspaceState.update(CHAT_THREAD_KEY, thread);
  // Each answer's explain line and stop note, by thread and turn: a reopened thread shows them again.
  panel.session.turnNotes = new TurnNoteStore(context.workspaceState);
  panel.session.onNewChat = () => void statusBar.reset();
  // Anticipated context: where the user is (file, cursor, visible lines, thread, draft) goes to the node,
  // debounced, so it can prefill what a question about it would retrieve (`contenox.anticipate.enabled`).
  const focus = new FocusTracker(
    (params) => {
      if (!client?.isRunning()) return false;
      void client.sendNotification(Methods.focus, params).catch(() => undefined);
      return true;
    },
    () => readAnticipateEnabled(vscode.workspace.getConfiguration('contenox')),
  );
  followChat(focus, panel.session);
  context.subscriptions.push(focus, trackEditors(focus));
  // The last command that failed in a terminal of the workspace (shell integration, VS Code 1.93+) goes with it.
  context.subscriptions.push(new TerminalRuns(focus, vscode.window as unknown as ShellEvents,
    (cwd) => vscode.workspace.getWorkspaceFolder(cwd) !== undefined));
  context.subscriptions.push(
    // The chat panel open when the window closed comes back with it (activation: onWebviewPanel:contenox.chat).
    vscode.window.registerWebviewPanelSerializer(ChatPanel.viewType, {
      deserializeWebviewPanel: async (webviewPanel) => panel.restorePanel(webviewPanel),
    }),
    // The Chat view of the Contenox activity-bar container: the same chat.
    vscode.window.registerWebviewViewProvider(ChatPanel.viewId, panel, { webviewOptions: { retainContextWhenHidden: true } }),
  );

  const runChatCommand = (command: string, args: unknown[]): Promise<void> =>
    panel.show(true).runCommand(labelFor(command, args), command, args);

  const pinsView = new PinsView({
    pins: async () => {
      if (!client) throw new Error('not started');
      return client.sendRequest<WorkspacePins[]>(Methods.pins, {});
    },
  });
  const pinsTree = vscode.window.createTreeView('contenox.pins', { treeDataProvider: pinsView });
  context.subscriptions.push(pinsTree);
  const refreshPins = async (): Promise<void> => {
    pinsView.refresh();
    const pinned = await pinsView.getChildren(); // sets the view's message
    pinsTree.message = pinsView.message;
    // Pin File / Unpin File show in the menus only where they apply.
    await vscode.commands.executeCommand('setContext', PINNED_CONTEXT, pinnedPaths(pinned));
  };

  const pickFile = async (verb: string): Promise<vscode.Uri | undefined> => {
    if (verb === 'unpin') {
      const pinned = await pinsView.getChildren();
      const picked = await vscode.window.showQuickPick(pinned.map((p) => ({ label: p.path, description: p.root, p })),
        { placeHolder: pinned.length ? 'Unpin which file?' : 'Nothing is pinned' });
      return picked ? vscode.Uri.parse(picked.p.uri) : undefined;
    }
    const found = await vscode.workspace.findFiles('**/*', '**/{.git,node_modules,.venv,__pycache__}/**', 5000);
    const picked = await vscode.window.showQuickPick(
      found.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })),
      { placeHolder: 'Pin which file into every prompt?', matchOnDescription: true });
    return picked?.uri;
  };

  const pinCommand = (serverCommand: string, verb: string) => async (resource?: unknown): Promise<void> => {
    const uri = await fileToPin(resource, () => pickFile(verb));
    if (!uri) return;
    if (!client) {
      void vscode.window.showWarningMessage('Contenox: the node is not connected.');
      return;
    }
    try {
      await client.sendRequest(ExecuteCommandRequest.type, { command: serverCommand, arguments: [uri.toString()] });
      void vscode.window.setStatusBarMessage(`Contenox: ${verb}ned ${vscode.workspace.asRelativePath(uri)}`, 3000);
    } catch (err) {
      void vscode.window.showErrorMessage(`Contenox: ${verb} failed: ${errorMessage(err)}`);
    }
    await refreshPins();
  };

  const pinSelection = async (): Promise<void> => {
    const args = selectionArgs();
    if (!args || args.text.trim() === '') {
      void vscode.window.showInformationMessage('Contenox: select the lines to pin first.');
      return;
    }
    if (!client) {
      void vscode.window.showWarningMessage('Contenox: the node is not connected.');
      return;
    }
    try {
      const { text: _text, ...lines } = args;
      const result = (await client.sendRequest(ExecuteCommandRequest.type,
        { command: ServerCommands.pin, arguments: [lines] })) as { pinned: string };
      void vscode.window.setStatusBarMessage(`Contenox: pinned ${vscode.workspace.asRelativePath(result.pinned)}`, 3000);
    } catch (err) {
      void vscode.window.showErrorMessage(`Contenox: pin failed: ${errorMessage(err)}`);
    }
    await refreshPins();
  };

  const switchThread = async (): Promise<void> => {
    let threads: ThreadSummary[] = [];
    try {
      threads = (await backend.threads?.()) ?? [];
    } catch (err) {
      void vscode.window.showErrorMessage(`Contenox: cannot list the threads: ${errorMessage(err)}`);
      return;
    }
    const current = panel.session.thread;
    const items = [
      { label: '$(add) New chat', description: 'a new thread', thread: undefined as string | undefined },
      ...threads.map((t) => ({
        label: t.title || t.thread,
        description: `${t.turns} turn${t.turns === 1 ? '' : 's'} · ${new Date(t.lastUsed * 1000).toLocaleString()}`,
        detail: t.thread === current ? `${t.thread} (open in the panel)` : t.thread,
        thread: t.thread as string | undefined,
      })),
    ];
    const picked = await vscode.window.showQuickPick(items, {
      placeHolder: threads.length ? 'Continue a thread of this workspace' : 'No threads yet in this workspace',
      matchOnDescription: true, matchOnDetail: true,
    });
    if (!picked) return;
    const session = panel.show();
    if (picked.thread === undefined) session.newChat();
    else await session.openThread(picked.thread);
  };

  const modelItem = vscode.window.createStatusBarItem('contenox.model', vscode.StatusBarAlignment.Right, 99);
  modelItem.command = 'contenox.chooseModel';
  context.subscriptions.push(modelItem);
  const showModel = async (): Promise<void> => {
    try {
      const choice = await client?.sendRequest<ModelChoice>(Methods.models, {});
      if (!choice) return;
      modelItem.text = `$(chip) ${choice.current}`;
      modelItem.tooltip = `Contenox serves ${choice.current}: click to choose another installed model`;
      modelItem.show();
    } catch {
      modelItem.hide();
    }
  };

  const chooseModel = async (): Promise<void> => {
    if (!client) {
      void vscode.window.showWarningMessage('Contenox: the node is not connected.');
      return;
    }
    let choice: ModelChoice;
    try {
      choice = await client.sendRequest<ModelChoice>(Methods.models, {});
    } catch (err) {
      void vscode.window.showErrorMessage(`Contenox: cannot list the models: ${errorMessage(err)}`);
      return;
    }
    const picked = await vscode.window.showQuickPick(
      choice.installed.map((name) => ({ label: name, description: name === choice.current ? 'serving now' : '' })),
      { placeHolder: `The node serves ${choice.current}; \`contenox model pull NAME\` installs more` });
    if (!picked || picked.label === choice.current) return;
    try {
      await client.sendRequest<ModelChoice>(Methods.useModel, { name: picked.label });
      void vscode.window.setStatusBarMessage(`Contenox: now serving ${picked.label} (loads with the next question)`, 5000);
      await showModel();
    } catch (err) {
      void vscode.window.showErrorMessage(`Contenox: cannot switch to ${picked.label}: ${errorMessage(err)}`);
    }
  };

  const selectionCommand = (serverCommand: string) => async (): Promise<void> => {
    const args = selectionArgs();
    if (!args || args.text.trim() === '') {
      void vscode.window.showInformationMessage('Contenox: select some code first.');
      return;
    }
    const { text: _text, ...rest } = args;
    // Ask About Selection: the question first (sent as `prompt`, the node's argument); dismissed: nothing is sent.
    const withArgs = await withQuestion(serverCommand, [rest], askQuestion);
    if (withArgs) await runChatCommand(serverCommand, withArgs);
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('contenox.openChat', () => void panel.show()),
    vscode.commands.registerCommand('contenox.switchThread', switchThread),
    vscode.commands.registerCommand('contenox.refreshPins', refreshPins),
    vscode.commands.registerCommand('contenox.pinSelection', pinSelection),
    vscode.commands.registerCommand('contenox.chooseModel', chooseModel),
    vscode.commands.registerCommand(EXPLAIN_COMMAND, () =>
      panel.show().showExplain(vscode.window.activeTextEditor?.document.uri.toString())),
    vscode.commands.registerCommand('contenox.explainSelectionCmd', selectionCommand(ServerCommands.explainSelection)),
    vscode.commands.registerCommand('contenox.findRelatedCmd', selectionCommand(ServerCommands.findRelated)),
    vscode.commands.registerCommand('contenox.askSelectionCmd', selectionCommand(ServerCommands.askSelection)),
    vscode.commands.registerCommand('contenox.pinFile', pinCommand(ServerCommands.pin, 'pin')),
    vscode.commands.registerCommand('contenox.unpinFile', pinCommand(ServerCommands.unpin, 'unpin')),
    vscode.commands.registerCommand(TOGGLE_COMMAND, toggleInlineCompletions),
    vscode.commands.registerCommand('contenox.restartServer', async () => {
      if (client) await client.restart();
      else await startClient(context, statusBar, completionToggle, panel, runChatCommand, focus);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('contenox.inlineCompletions')) completionToggle.refresh();
      if (e.affectsConfiguration('contenox.anticipate')) focus.refresh();
      if (e.affectsConfiguration('contenox.path')) {
        await client?.stop().catch(() => undefined);
        client = undefined;
        await startClient(context, statusBar, completionToggle, panel, runChatCommand, focus);
      }
    }),
  );

  // Not awaited: the node may still be loading its model; commands above are usable meanwhile.
  const starting = startClient(context, statusBar, completionToggle, panel, runChatCommand, focus);
  started = starting.then(() => undefined, () => undefined);
  void starting.then(async () => { await refreshPins(); await showModel(); }, () => undefined);
}

async function startClient(
  context: vscode.ExtensionContext,
  statusBar: StatusBar,
  completionToggle: CompletionToggle,
  panel: ChatPanel,
  runChatCommand: (command: string, args: unknown[]) => Promise<void>,
  focus: FocusTracker,
): Promise<void> {
  const setting = vscode.workspace.getConfiguration('contenox').get<string>('path', 'contenox');
  const executable = resolveExecutable(setting);
  if (!executable) {
    statusBar.update({ kind: 'missing', executable: setting });
    // Not awaited: activation must not wait for the user to dismiss the message.
    void vscode.window.showErrorMessage(missingMessage(setting), 'Copy Install Command', 'Open Settings')
      .then(async (choice) => {
        if (choice === 'Copy Install Command') await vscode.env.clipboard.writeText(INSTALL_COMMAND);
        if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'contenox.path');
      });
    return;
  }

  // vscode-languageclient appends `--stdio`; the proxy connects to the shared node (or starts it).
  const serverOptions: ServerOptions = { command: executable, args: ['lsp'], transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    outputChannelName: 'Contenox',
    middleware: {
      // Code actions from the server run these commands: show their answer in the chat panel.
      // Ask About Selection asks for the question first (dismissed: nothing is sent).
      executeCommand: async (command, args, next) => {
        if (!CHAT_COMMANDS.has(command)) return next(command, args);
        const withArgs = await withQuestion(command, args, askQuestion);
        return withArgs ? runChatCommand(command, withArgs) : undefined;
      },
      // The node's selection actions as quick fixes / a refactoring, titled "Contenox: …", so they sort first.
      provideCodeActions: async (document, range, context, token, next) =>
        kindSelectionActions(await next(document, range, context, token), context.only),
      // Ghost text: gated by contenox.inlineCompletions.enable and debounced while the user types.
      provideInlineCompletionItems: inlineCompletionMiddleware(() =>
        readInlineSettings(vscode.workspace.getConfiguration('contenox'))),
    },
  };
  const lc = new LanguageClient('contenox', 'Contenox', serverOptions, clientOptions);
  // This editor runs an agent turn's commands and answers whether a check command may run (asking the user
  // first): say so, and answer the node's requests.
  lc.registerFeature({
    fillClientCapabilities: (capabilities) => {
      capabilities.experimental = { ...(capabilities.experimental ?? {}), [RUN_COMMAND_CAPABILITY]: true };
    },
    initialize: () => undefined,
    getState: () => ({ kind: 'static' }),
    clear: () => undefined,
  });
  const commandChannel = vscode.window.createOutputChannel('Contenox Commands');
  context.subscriptions.push(commandChannel);
  lc.onRequest(RUN_COMMAND, (params: RunCommandParams) => runCommandAfterAsking(params, editorRunner(commandChannel)));
  // A verified fix's check command: may it run (in a scratch copy)? Asked once per workspace and command.
  lc.onRequest(ALLOW_CHECK, (params: unknown) => allowCheckAfterAsking(params, editorAsk));
  lc.onNotification(Methods.cacheStatus, (status: CacheStatus) => {
    statusBar.onCacheStatus(status);
  });
  lc.onNotification(Methods.anticipation, (params: unknown) => {
    statusBar.onAnticipation(params);
  });
  lc.onNotification(Methods.chatChunk, (chunk: ChatChunk) => panel.session.onChunk(chunk));
  lc.onNotification(Methods.chatTool, (tool: ChatTool) => panel.session.onTool(tool));
  lc.onNotification(Methods.chatProgress, (progress: ChatProgress) => panel.session.onProgress(progress));
  context.subscriptions.push(
    lc.onDidChangeState((e) => {
      if (e.newState === State.Stopped) {
        statusBar.update({ kind: 'down' });
        completionToggle.reset();
      }
      if (e.newState === State.Starting) statusBar.update({ kind: 'starting' });
      if (e.newState === State.Running) {
        // Connected (also after an automatic restart): idle until the node reports a turn.
        statusBar.onCacheStatus({
          workspace: '', cachedTokens: 0, newTokens: 0, promptTokens: 0, hitPct: null, ttftMs: null, state: 'idle',
        });
        // Whether the node's model can complete inline (asked again after every (re)start).
        void completionToggle.query(() => lc.sendRequest(Methods.completionInfo, completionInfoParams()));
        // A new connection (a restarted node) is told where the user is again.
        focus.refresh();
      }
    }),
  );
  client = lc;
  try {
    statusBar.update({ kind: 'starting' });
    await lc.start();
  } catch (err) {
    statusBar.update({ kind: 'down', detail: errorMessage(err) });
    void vscode.window.showErrorMessage(`Contenox: could not start \`${executable} lsp\`: ${errorMessage(err)}`);
  }
}

export async function deactivate(): Promise<void> {
  const lc = client;
  client = undefined;
  await lc?.stop();
}
