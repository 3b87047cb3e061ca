// What the status bar item shows, as a pure function of the node's state (unit-tested without
// VS Code). The StatusBar class in ./statusBar applies it to a real StatusBarItem.

import type { Anticipation, CacheStatus } from './protocol';
import { formatPct, formatSeconds } from './webview/render';

export type StatusInput =
  | { kind: 'starting' }
  | { kind: 'cache'; status: CacheStatus }
  | { kind: 'down'; detail?: string }
  | { kind: 'modelMissing'; detail?: string }
  | { kind: 'missing'; executable: string };

/** JSON-RPC error codes of contenox.errors that change what the status bar says. */
export const ErrorCodes = {
  modelNotFound: -32002,
  modelSourceUnavailable: -32003,
  nodeUnavailable: -32016,
} as const;

/** A failed request's error as a status (model missing, node down), or undefined when it is not one. */
export function statusForError(err: unknown): StatusInput | undefined {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const detail = typeof e.message === 'string' ? e.message : undefined;
  switch (e.code) {
    case ErrorCodes.modelNotFound:
    case ErrorCodes.modelSourceUnavailable:
      return { kind: 'modelMissing', detail };
    case ErrorCodes.nodeUnavailable:
      return { kind: 'down', detail };
    default:
      return undefined;
  }
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** Show with the warning background. */
  warning: boolean;
  /** True while the node is busy (the text carries a spinning icon). */
  busy: boolean;
}

const SPIN = '$(sync~spin)';

/** "92% cached · 0.4 s" from a cacheStatus notification (hitPct falls back to the token counts). */
export function formatCacheHit(status: CacheStatus): string {
  let pct = status.hitPct;
  if ((pct === null || pct === undefined) && status.promptTokens > 0) {
    pct = (100 * status.cachedTokens) / status.promptTokens;
  }
  const parts = [`${formatPct(pct)} cached`];
  if (typeof status.ttftMs === 'number') parts.push(formatSeconds(status.ttftMs));
  return parts.join(' · ');
}

function isModelMissing(message: string | undefined): boolean {
  return message !== undefined && /model/i.test(message) && /(missing|not installed|not found|no model)/i.test(message);
}

export function statusView(input: StatusInput): StatusView {
  switch (input.kind) {
    case 'starting':
      return { text: `${SPIN} Contenox`, tooltip: 'Contenox: connecting to the node…', warning: false, busy: true };
    case 'missing':
      return {
        text: '$(warning) Contenox: not installed',
        tooltip: `The Contenox executable "${input.executable}" was not found. ` +
          'Install it with `pipx install ./` in a clone of the Contenox repository, or set `contenox.path`.',
        warning: true,
        busy: false,
      };
    case 'modelMissing':
      return {
        text: '$(warning) Contenox: model missing',
        tooltip: `The node has no model to answer with${input.detail ? `: ${input.detail}` : ''}. ` +
          'Run `contenox init` (or `contenox model pull NAME`).',
        warning: true,
        busy: false,
      };
    case 'down':
      return {
        text: '$(warning) Contenox: node down',
        tooltip: `The Contenox node is not running${input.detail ? `: ${input.detail}` : ''}. ` +
          'Run "Contenox: Restart Node Connection".',
        warning: true,
        busy: false,
      };
    case 'cache': {
      const s = input.status;
      const hit = s.promptTokens > 0 ? formatCacheHit(s) : 'no turn yet';
      const tokens = s.promptTokens > 0
        ? `\n${s.cachedTokens} of ${s.promptTokens} prompt tokens served from the cache, ${s.newTokens} computed.`
        : '';
      const where = s.workspace ? `\nWorkspace: ${s.workspace}` : '';
      switch (s.state) {
        case 'queued':
          return { text: `${SPIN} queued…`, tooltip: `Contenox is waiting for the workspace or an engine slot.${where}`, warning: false, busy: true };
        case 'indexing':
          return { text: `${SPIN} indexing…`, tooltip: `Contenox is indexing the workspace.${where}`, warning: false, busy: true };
        case 'prefill':
          return { text: `${SPIN} prefill…`, tooltip: `Contenox is reading the prompt.${tokens}${where}`, warning: false, busy: true };
        case 'decode':
          return {
            text: s.promptTokens > 0 ? `${SPIN} ${hit}` : `${SPIN} answering…`,
            tooltip: `Contenox is answering.${tokens}${where}`,
            warning: false,
            busy: true,
          };
        case 'error': {
          const modelMissing = isModelMissing(s.message);
          return {
            text: modelMissing ? '$(warning) Contenox: model missing' : '$(warning) Contenox: error',
            tooltip: (s.message ?? 'The Contenox node reported an error.') +
              (modelMissing ? '\nInstall it with `contenox init`.' : '') + where,
            warning: true,
            busy: false,
          };
        }
        case 'idle':
        default:
          return {
            text: `$(database) ${hit}`,
            tooltip: `Contenox prefix cache: ${hit}.${tokens}${where}\nClick for the explain-context table.`,
            warning: false,
            busy: false,
          };
      }
    }
  }
}

/** The file name of a `file:` URI ("parser.py"), or '' without one. */
function fileName(uri: string | undefined): string {
  if (!uri) return '';
  const name = uri.replace(/[?#].*$/, '').split('/').pop() ?? '';
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/**
 * What the status item adds for the node's anticipated context: a short suffix ("$(flame) warm: parser.py") and a
 * tooltip line; null when there is nothing to show ('idle', 'off', none).
 */
export function anticipationView(a: Anticipation | undefined): { suffix: string; tooltip: string } | null {
  if (!a || (a.state !== 'warm' && a.state !== 'computing')) return null;
  const file = fileName(a.uri);
  const tokens = a.tokens.toLocaleString('en-US');
  if (a.state === 'warm') {
    return {
      suffix: `$(flame) warm${file ? `: ${file}` : ''}`,
      tooltip: `Anticipated context: ${a.text || `warm${file ? ` for ${file}` : ''}: ${tokens} tokens prefilled`}` +
        ' (a question about it starts from the cache).',
    };
  }
  return {
    suffix: `$(flame) warming${file ? `: ${file}` : ''}…`,
    tooltip: `Anticipated context: ${a.text || `prefilling the code around the cursor${file ? ` in ${file}` : ''}`}.`,
  };
}

/** A cache view with the anticipated context added (other views, a warning, or nothing anticipated: as is). */
export function withAnticipation(view: StatusView, input: StatusInput, a: Anticipation | undefined): StatusView {
  const shown = input.kind === 'cache' && !view.warning ? anticipationView(a) : null;
  if (!shown) return view;
  return { ...view, text: `${view.text} · ${shown.suffix}`, tooltip: `${view.tooltip}\n${shown.tooltip}` };
}
