// A minimal stand-in for the `vscode` module (aliased in vitest.config.mts for the unit tests).
// Only what the extension's testable modules touch; state is inspectable by the tests.

type Listener<T> = (e: T) => unknown;

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (listener: Listener<T>): { dispose(): void } => {
    this.listeners.push(listener);
    return { dispose: () => { this.listeners = this.listeners.filter((l) => l !== listener); } };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  private cancelled = false;
  readonly token: { readonly isCancellationRequested: boolean; onCancellationRequested: EventEmitter<void>['event'] };
  constructor() {
    const isCancelled = (): boolean => this.cancelled;
    this.token = {
      get isCancellationRequested(): boolean { return isCancelled(); },
      onCancellationRequested: this.emitter.event,
    };
  }
  cancel(): void {
    if (!this.cancelled) {
      this.cancelled = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export enum TreeItemCollapsibleState { None = 0, Collapsed = 1, Expanded = 2 }

export class TreeItem {
  resourceUri?: Uri;
  description?: string;
  tooltip?: string;
  contextValue?: string;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(readonly label: string, readonly collapsibleState: TreeItemCollapsibleState) {}
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export enum StatusBarAlignment { Left = 1, Right = 2 }
export enum ViewColumn { Active = -1, Beside = -2, One = 1, Two = 2, Three = 3 }

export class MockStatusBarItem {
  text = '';
  tooltip: string | undefined;
  command: string | undefined;
  name: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  disposed = false;
  constructor(readonly id: string, readonly alignment: StatusBarAlignment, readonly priority: number) {}
  show(): void { this.visible = true; }
  hide(): void { this.visible = false; }
  dispose(): void { this.disposed = true; }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}

export class Range {
  constructor(readonly start: Position, readonly end: Position) {}
}

export class CodeActionKind {
  static readonly Empty = new CodeActionKind('');
  static readonly QuickFix = new CodeActionKind('quickfix');
  static readonly Refactor = new CodeActionKind('refactor');
  static readonly RefactorRewrite = new CodeActionKind('refactor.rewrite');
  static readonly Source = new CodeActionKind('source');
  static readonly SourceOrganizeImports = new CodeActionKind('source.organizeImports');
  private constructor(readonly value: string) {}
  append(part: string): CodeActionKind { return new CodeActionKind(this.value ? `${this.value}.${part}` : part); }
  contains(other: CodeActionKind): boolean {
    return this.value === '' || other.value === this.value || other.value.startsWith(`${this.value}.`);
  }
}

export class CodeAction {
  command?: { command: string; title: string; arguments?: unknown[] };
  isPreferred?: boolean;
  constructor(public title: string, public kind?: CodeActionKind) {}
}

/** A webview of a panel or view: what the extension posted to it and a way to send it messages. */
export class MockWebview {
  html = '';
  options: unknown = {};
  readonly cspSource = 'vscode-webview://test';
  readonly posted: unknown[] = [];
  private readonly received = new EventEmitter<unknown>();
  readonly onDidReceiveMessage = this.received.event;
  asWebviewUri(uri: Uri): Uri { return uri; }
  async postMessage(msg: unknown): Promise<boolean> { this.posted.push(msg); return true; }
  /** The page sends `msg` to the extension. */
  send(msg: unknown): void { this.received.fire(msg); }
}

export class MockWebviewPanel {
  readonly webview = new MockWebview();
  visible = true;
  iconPath: unknown;
  revealed = 0;
  disposed = false;
  private readonly disposedEmitter = new EventEmitter<void>();
  readonly onDidDispose = this.disposedEmitter.event;
  constructor(readonly viewType: string, public viewColumn: ViewColumn | undefined) {}
  reveal(): void { this.revealed += 1; }
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.disposedEmitter.fire();
  }
}

export class MockWebviewView {
  readonly webview = new MockWebview();
  visible = true;
  shown = 0;
  private readonly disposedEmitter = new EventEmitter<void>();
  readonly onDidDispose = this.disposedEmitter.event;
  show(): void { this.shown += 1; }
  dispose(): void { this.disposedEmitter.fire(); }
}

export enum FileType { Unknown = 0, File = 1, Directory = 2, SymbolicLink = 64 }
export enum ConfigurationTarget { Global = 1, Workspace = 2, WorkspaceFolder = 3 }
export enum InlineCompletionTriggerKind { Invoke = 0, Automatic = 1 }

export const created: {
  statusBarItems: MockStatusBarItem[];
  messages: { level: string; text: string }[];
  shown: { uri: string; options: { selection?: Range; preview?: boolean } | undefined }[];
  /** executeCommand calls: the command and its arguments. */
  commands: { command: string; args: unknown[] }[];
  /** WorkspaceEdits given to workspace.applyEdit. */
  applied: WorkspaceEdit[];
  /** Content providers by scheme. */
  providers: Map<string, { provideTextDocumentContent(uri: Uri): string }>;
  /** Webview panels window.createWebviewPanel created. */
  panels: MockWebviewPanel[];
  /** What the next input boxes answer (first first; none left: dismissed). */
  inputs: (string | undefined)[];
} = {
  panels: [],
  inputs: [],
  statusBarItems: [],
  messages: [],
  shown: [],
  commands: [],
  applied: [],
  providers: new Map(),
};

/** What the next modal/information message answers (the button's title, or undefined: dismissed). */
export const answers: { choice: string | undefined } = { choice: undefined };

export class WorkspaceEdit {
  readonly replaced: { uri: Uri; range: Range; text: string }[] = [];
  readonly createdFiles: { uri: Uri; contents: string }[] = [];
  replace(uri: Uri, range: Range, text: string): void { this.replaced.push({ uri, range, text }); }
  createFile(uri: Uri, options?: { contents?: Uint8Array }): void {
    this.createdFiles.push({ uri, contents: new TextDecoder().decode(options?.contents ?? new Uint8Array()) });
  }
}

/** The text documents workspace.openTextDocument opens, by URI string. */
export const documents = new Map<string, string>();

/** The settings behind workspace.getConfiguration, by full key (`contenox.path`); updates land here too. */
export const settings = new Map<string, unknown>();
export const settingUpdates: { key: string; value: unknown; target: ConfigurationTarget | undefined }[] = [];

/** The fake file system behind workspace.fs and workspace.findFiles: URI strings of existing files. */
export const files = new Set<string>();

export class Uri {
  private constructor(readonly scheme: string, readonly path: string, readonly query = '') {}
  static file(path: string): Uri { return new Uri('file', path); }
  static from(parts: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(parts.scheme, parts.path ?? '', parts.query ?? '');
  }
  static parse(value: string): Uri {
    const m = /^([a-z]+):\/\/(.*)$/.exec(value);
    return m ? new Uri(m[1] ?? 'file', m[2] ?? '') : new Uri('file', value);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri { return new Uri(base.scheme, [base.path, ...parts].join('/')); }
  get fsPath(): string { return this.path; }
  toString(): string { return `${this.scheme}://${this.path}`; }
}

/** The editor events window / workspace expose: tests fire them. */
export const editorEvents = {
  activeEditor: new EventEmitter<unknown>(),
  selection: new EventEmitter<{ textEditor: unknown }>(),
  visibleRanges: new EventEmitter<{ textEditor: unknown }>(),
  saved: new EventEmitter<{ uri: Uri }>(),
};

export const window = {
  onDidChangeActiveTextEditor: editorEvents.activeEditor.event,
  onDidChangeTextEditorSelection: editorEvents.selection.event,
  onDidChangeTextEditorVisibleRanges: editorEvents.visibleRanges.event,
  createStatusBarItem(id: string, alignment: StatusBarAlignment, priority: number): MockStatusBarItem {
    const item = new MockStatusBarItem(id, alignment, priority);
    created.statusBarItems.push(item);
    return item;
  },
  showErrorMessage: async (text: string): Promise<undefined> => { created.messages.push({ level: 'error', text }); return undefined; },
  showWarningMessage: async (text: string): Promise<undefined> => { created.messages.push({ level: 'warning', text }); return undefined; },
  showInformationMessage: async (text: string): Promise<string | undefined> => {
    created.messages.push({ level: 'info', text });
    const choice = answers.choice;
    answers.choice = undefined;
    return choice;
  },
  setStatusBarMessage: (text: string): { dispose(): void } => {
    created.messages.push({ level: 'status', text });
    return { dispose(): void {} };
  },
  visibleTextEditors: [] as unknown[],
  createWebviewPanel: (viewType: string, _title: string, show: { viewColumn?: ViewColumn } | ViewColumn): MockWebviewPanel => {
    const column = typeof show === 'object' ? show.viewColumn : show;
    const panel = new MockWebviewPanel(viewType, column === ViewColumn.Beside ? ViewColumn.Two : column);
    created.panels.push(panel);
    return panel;
  },
  showInputBox: async (_options?: unknown): Promise<string | undefined> => created.inputs.shift(),
  showTextDocument: async (uri: Uri, options?: { selection?: Range; preview?: boolean }): Promise<undefined> => {
    created.shown.push({ uri: uri.toString(), options });
    return undefined;
  },
  activeTextEditor: undefined as unknown,
};

export const workspace = {
  onDidSaveTextDocument: editorEvents.saved.event,
  getConfiguration: (section?: string) => {
    const full = (key: string): string => (section ? `${section}.${key}` : key);
    return {
      get: <T>(key: string, fallback?: T): T | undefined =>
        (settings.has(full(key)) ? settings.get(full(key)) as T : fallback),
      update: async (key: string, value: unknown, target?: ConfigurationTarget): Promise<void> => {
        settings.set(full(key), value);
        settingUpdates.push({ key: full(key), value, target });
      },
    };
  },
  workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
  asRelativePath: (uri: Uri): string => uri.path.replace(/^\/ws\//, ''),
  applyEdit: async (edit: WorkspaceEdit): Promise<boolean> => { created.applied.push(edit); return true; },
  openTextDocument: async (uri: Uri) => {
    const text = documents.get(uri.toString());
    if (text === undefined) throw new Error(`cannot open ${uri.toString()}`);
    return {
      uri, getText: () => text,
      positionAt: (offset: number): Position => {
        const before = text.slice(0, offset).split('\n');
        return new Position(before.length - 1, (before[before.length - 1] ?? '').length);
      },
    };
  },
  registerTextDocumentContentProvider: (scheme: string, provider: { provideTextDocumentContent(uri: Uri): string }) => {
    created.providers.set(scheme, provider);
    return { dispose(): void { created.providers.delete(scheme); } };
  },
  fs: {
    stat: async (uri: Uri): Promise<{ type: FileType }> => {
      if (files.has(uri.toString())) return { type: FileType.File };
      throw Object.assign(new Error(`ENOENT ${uri.toString()}`), { code: 'FileNotFound' });
    },
  },
  /** Only the `**\/suffix` patterns openLocation uses. */
  findFiles: async (include: string, _exclude?: string, maxResults?: number): Promise<Uri[]> => {
    const suffix = include.replace(/^\*\*\//, '');
    const hits = [...files].filter((f) => f.endsWith(`/${suffix}`)).map((f) => Uri.parse(f));
    return hits.slice(0, maxResults ?? hits.length);
  },
};

export const commands = {
  registerCommand: (_id: string, _fn: unknown) => ({ dispose(): void {} }),
  executeCommand: async (command: string, ...args: unknown[]): Promise<undefined> => {
    created.commands.push({ command, args });
    return undefined;
  },
};
