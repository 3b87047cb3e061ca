// A small, escape-first syntax highlighter for the chat's code blocks: comments, strings, numbers and
// keywords of the languages a coding answer usually shows. Unknown languages are shown plain.

import { escapeHtml } from './render';

const KEYWORDS: Record<string, readonly string[]> = {
  python: ['False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def',
    'del', 'elif', 'else', 'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda',
    'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try', 'while', 'with', 'yield', 'self'],
  js: ['async', 'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'default', 'delete', 'do', 'else',
    'export', 'extends', 'false', 'finally', 'for', 'from', 'function', 'if', 'import', 'in', 'instanceof', 'interface',
    'let', 'new', 'null', 'of', 'return', 'static', 'super', 'switch', 'this', 'throw', 'true', 'try', 'type',
    'typeof', 'undefined', 'var', 'void', 'while', 'yield'],
  go: ['break', 'case', 'chan', 'const', 'continue', 'default', 'defer', 'else', 'false', 'for', 'func', 'go', 'if',
    'import', 'interface', 'map', 'nil', 'package', 'range', 'return', 'select', 'struct', 'switch', 'true', 'type',
    'var'],
  rust: ['as', 'async', 'await', 'break', 'const', 'continue', 'crate', 'else', 'enum', 'false', 'fn', 'for', 'if',
    'impl', 'in', 'let', 'loop', 'match', 'mod', 'move', 'mut', 'pub', 'ref', 'return', 'self', 'Self', 'static',
    'struct', 'trait', 'true', 'type', 'use', 'where', 'while'],
  c: ['break', 'case', 'char', 'class', 'const', 'continue', 'default', 'do', 'double', 'else', 'enum', 'false',
    'float', 'for', 'if', 'int', 'long', 'namespace', 'new', 'nullptr', 'private', 'public', 'return', 'sizeof',
    'static', 'struct', 'switch', 'template', 'true', 'typedef', 'unsigned', 'void', 'while'],
  sh: ['case', 'do', 'done', 'elif', 'else', 'esac', 'export', 'fi', 'for', 'function', 'if', 'in', 'local', 'then',
    'while'],
};

const ALIASES: Record<string, string> = {
  py: 'python', python3: 'python', javascript: 'js', typescript: 'js', ts: 'js', tsx: 'js', jsx: 'js', mjs: 'js',
  golang: 'go', rs: 'rust', cpp: 'c', 'c++': 'c', cc: 'c', h: 'c', hpp: 'c', java: 'c', cs: 'c', csharp: 'c',
  bash: 'sh', shell: 'sh', zsh: 'sh', console: 'sh',
};

const HASH_COMMENT = new Set(['python', 'sh']);

/** The language a fence names, as this highlighter knows it (undefined: shown plain). */
export function languageOf(fence: string): string | undefined {
  const lang = fence.toLowerCase();
  const known = ALIASES[lang] ?? lang;
  return KEYWORDS[known] ? known : undefined;
}

/** ``code`` as HTML: escaped, with `<span class="tok-…">` around comments, strings, numbers and keywords. */
export function highlight(code: string, fence: string): string {
  const lang = languageOf(fence);
  if (!lang) return escapeHtml(code);
  const words = new Set(KEYWORDS[lang]);
  const comment = HASH_COMMENT.has(lang) ? '#[^\\n]*' : '\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?(?:\\*\\/|$)';
  const strings = lang === 'python'
    ? '"""[\\s\\S]*?(?:"""|$)|\'\'\'[\\s\\S]*?(?:\'\'\'|$)|"(?:\\\\.|[^"\\\\\\n])*"?|\'(?:\\\\.|[^\'\\\\\\n])*\'?'
    : '`(?:\\\\.|[^`\\\\])*`?|"(?:\\\\.|[^"\\\\\\n])*"?|\'(?:\\\\.|[^\'\\\\\\n])*\'?';
  const token = new RegExp(`(${comment})|(${strings})|(\\b\\d[\\d_]*(?:\\.\\d+)?\\b)|([A-Za-z_]\\w*)`, 'g');
  let out = '';
  let last = 0;
  for (const m of code.matchAll(token)) {
    const at = m.index ?? 0;
    out += escapeHtml(code.slice(last, at));
    const text = escapeHtml(m[0]);
    if (m[1]) out += `<span class="tok-comment">${text}</span>`;
    else if (m[2]) out += `<span class="tok-string">${text}</span>`;
    else if (m[3]) out += `<span class="tok-number">${text}</span>`;
    else if (words.has(m[0])) out += `<span class="tok-keyword">${text}</span>`;
    else out += text;
    last = at + m[0].length;
  }
  return out + escapeHtml(code.slice(last));
}
