// Runs the real `contenox lsp --stdio` the way vscode-languageclient does, against a private node:
// a temp CONTENOX_HOME holding a shared model (symlinked, pulled once if missing), a short
// temp XDG_RUNTIME_DIR for the node socket, and a real git workspace. Stops the node afterwards.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const TEST_MODEL = 'smollm2-135m';
const VENV_BIN = path.join(REPO_ROOT, '.venv', 'bin');

/** Small answers keep the suite fast; long enough that a cancel lands mid-generation. */
/** The node's engine settings: answers kept short (48 new tokens) unless a test sets its own. */
export type EngineSettings = Record<string, number | boolean | string>;

function config(model: string, engine: EngineSettings = {}): string {
  const settings: EngineSettings = { max_new_tokens: 48, cache_size_gb: 0.5, ...engine };
  const lines = Object.entries(settings).map(([key, value]) => `${key} = ${JSON.stringify(value)}`);
  return `[model]\ndefault = "${model}"\n\n[engine]\n${lines.join('\n')}\n\n[node]\nidle_exit_s = 600\n`;
}

export function contenoxBin(): string {
  return process.env.CONTENOX_BIN ?? path.join(VENV_BIN, 'contenox');
}

function python(): string {
  return process.env.CONTENOX_PYTHON ?? path.join(VENV_BIN, 'python');
}

/**
 * A model's directory: from CONTENOX_E2E_MODELS_DIR when it holds the model (e.g. `~/.contenox/models`,
 * to reuse a big model already pulled), else the shared test home (like tests/conftest.py), pulled
 * through ModelStore if missing.
 */
export function sharedModelDir(model: string = TEST_MODEL): string {
  const local = process.env.CONTENOX_E2E_MODELS_DIR;
  if (local && fs.existsSync(path.join(local, model))) return path.join(local, model);
  const shared = process.env.CONTENOX_TEST_HOME ?? path.join(REPO_ROOT, '.cache', 'test-home');
  const dir = path.join(shared, 'models', model);
  if (!fs.existsSync(dir)) {
    const script = 'import sys\nfrom pathlib import Path\nfrom contenox.runtime_ov.store import ModelStore\n' +
      'print(ModelStore(Path(sys.argv[1])).ensure(sys.argv[2]).path)';
    execFileSync(python(), ['-c', script, path.join(shared, 'models'), model], { stdio: 'inherit', timeout: 900_000 });
  }
  return dir;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    stdio: 'ignore',
  });
}

export function makeRepo(root: string): string {
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(path.join(root, 'util.py'), 'def helper(x):\n    """Add one."""\n    return x + 1\n');
  fs.writeFileSync(path.join(root, 'main.py'), 'from util import helper\n\n\ndef run():\n    return helper(41)\n');
  git(root, 'init', '-q');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'init');
  return root;
}

export interface Notification { method: string; params: unknown }

export class LspSession {
  readonly notifications: Notification[] = [];
  private listeners: ((n: Notification) => void)[] = [];
  stderr = '';

  private constructor(readonly proc: ChildProcess, readonly connection: MessageConnection) {
    connection.onNotification((method: string, params: unknown) => {
      const n = { method, params };
      this.notifications.push(n);
      for (const l of [...this.listeners]) l(n);
    });
    // Server-initiated requests a client must answer (progress creation, configuration).
    connection.onRequest((_method: string) => null);
  }

  static start(env: NodeJS.ProcessEnv, cwd: string): LspSession {
    // vscode-languageclient runs `<command> <args...> --stdio`.
    const proc = spawn(contenoxBin(), ['lsp', '--stdio'], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const connection = createMessageConnection(
      new StreamMessageReader(proc.stdout!),
      new StreamMessageWriter(proc.stdin!),
    );
    const session = new LspSession(proc, connection);
    proc.stderr!.on('data', (d: Buffer) => { session.stderr += d.toString(); });
    connection.listen();
    return session;
  }

  /** Call f for each notification of `method` from now on. */
  on(method: string, f: (params: unknown) => void): () => void {
    const l = (n: Notification): void => { if (n.method === method) f(n.params); };
    this.listeners.push(l);
    return () => { this.listeners = this.listeners.filter((x) => x !== l); };
  }

  waitFor(method: string, pred: (params: unknown) => boolean = () => true): Promise<unknown> {
    return new Promise((resolve) => {
      const off = this.on(method, (p) => {
        if (pred(p)) {
          off();
          resolve(p);
        }
      });
    });
  }

  async close(): Promise<void> {
    try {
      await Promise.race([this.connection.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 5_000))]);
      await this.connection.sendNotification('exit');
    } catch {
      // already gone
    }
    this.connection.dispose();
    const exited = new Promise<void>((resolve) => {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) resolve();
      else this.proc.once('exit', () => resolve());
    });
    this.proc.stdin?.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

export class NodeHome {
  readonly home: string;
  readonly runtime: string;
  readonly workspace: string;
  readonly env: NodeJS.ProcessEnv;

  /** A private node home whose default model is `model` (the small test model unless told), answering at most
   * `engine` settings over the short-answer defaults. */
  constructor(readonly model: string = TEST_MODEL, engine: EngineSettings = {}) {
    const modelDir = sharedModelDir(model);
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'contenox-vscode-'));
    this.home = path.join(base, 'home');
    fs.mkdirSync(path.join(this.home, 'models'), { recursive: true });
    fs.symlinkSync(modelDir, path.join(this.home, 'models', model), 'dir');
    fs.writeFileSync(path.join(this.home, 'config.toml'), config(model, engine));
    // Short: the socket path must fit a sockaddr_un.
    this.runtime = fs.mkdtempSync('/tmp/cx-');
    this.workspace = makeRepo(path.join(base, 'ws'));
    this.env = { ...process.env, CONTENOX_HOME: this.home, XDG_RUNTIME_DIR: this.runtime };
  }

  uri(rel: string): string {
    return pathToFileURL(path.join(this.workspace, rel)).toString();
  }

  /** `contenox node stop`, then remove the temp dirs. */
  stopNode(): void {
    try {
      execFileSync(contenoxBin(), ['node', 'stop'], { env: this.env, stdio: 'ignore', timeout: 60_000 });
    } catch {
      // not running
    }
    const lock = path.join(this.runtime, 'contenox', 'node.lock');
    try {
      const pid = Number(fs.readFileSync(lock, 'utf8').trim());
      if (pid > 0) process.kill(pid, 'SIGTERM');
    } catch {
      // gone
    }
    fs.rmSync(this.runtime, { recursive: true, force: true });
    fs.rmSync(path.dirname(this.home), { recursive: true, force: true });
  }
}
