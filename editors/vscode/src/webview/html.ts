// The chat webview's HTML shell: strict CSP (no remote anything, scripts only with the nonce),
// styles from the extension's media folder, colours from VS Code's theme variables.

import { escapeHtml } from './render';

export interface PageOptions {
  /** `webview.cspSource`: the only origin allowed for the stylesheet and script. */
  cspSource: string;
  scriptUri: string;
  styleUri: string;
  nonce: string;
}

export function makeNonce(random: () => number = Math.random): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < 32; i++) out += chars.charAt(Math.floor(random() * chars.length));
  return out;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function renderPage(opts: PageOptions): string {
  const csp = escapeHtml(contentSecurityPolicy(opts.cspSource, opts.nonce));
  const nonce = escapeHtml(opts.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(opts.styleUri)}">
<title>Contenox</title>
</head>
<body>
<div id="empty" class="empty-state">
  <p><strong>Ask about this workspace.</strong> Answers come from the model on this machine; each one shows what it was given.</p>
  <p>Select code and use <em>Contenox: Explain Selection</em>, <em>Find Related Code</em> or <em>Ask About Selection…</em> (editor context menu or light bulb); <em>Contenox: Switch Chat Thread…</em> continues an earlier chat.</p>
</div>
<main id="log" role="log" aria-live="polite" aria-label="Conversation"></main>
<form id="composer" aria-label="Ask Contenox">
  <label for="prompt" class="visually-hidden">Question</label>
  <textarea id="prompt" rows="3" placeholder="Ask about this workspace… (Enter to send, Shift+Enter for a new line, Escape to stop)"></textarea>
  <div class="actions">
    <button id="send" type="submit" title="Send (Enter)">Send</button>
    <button id="stop" type="button" title="Stop (Escape)" disabled>Stop</button>
    <button id="new-chat" type="button" title="Start a new conversation (the model forgets this one)">New chat</button>
  </div>
</form>
<script nonce="${nonce}" src="${escapeHtml(opts.scriptUri)}"></script>
</body>
</html>`;
}
