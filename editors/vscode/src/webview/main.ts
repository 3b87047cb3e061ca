// Runs inside the chat webview (browser context). Talks to the extension host only through
// postMessage; renders with the escape-first renderer in ./render.

import { isFromWebview, isToWebview, MAX_DRAFT_CHARS, type FromWebview, type ToWebview } from '../protocol';
import {
  escapeHtml, explainSummary, renderEdits, renderExplainTable, renderMarkdown, renderToolStep, stopNote,
} from './render';

interface VsCodeApi { postMessage(message: FromWebview): void }
declare function acquireVsCodeApi(): VsCodeApi;

interface Answer { element: HTMLElement; body: HTMLElement; text: string; done: boolean; question: string }

const vscode = acquireVsCodeApi();
const log = document.getElementById('log') as HTMLElement;
const form = document.getElementById('composer') as HTMLFormElement;
const prompt = document.getElementById('prompt') as HTMLTextAreaElement;
const stopButton = document.getElementById('stop') as HTMLButtonElement;
const emptyHint = document.getElementById('empty') as HTMLElement | null;
const answers = new Map<string, Answer>();
let active: string | null = null;

function scrollToEnd(): void {
  log.scrollTop = log.scrollHeight;
}

/** The empty-state hint shows while the conversation is empty (a new chat, a thread without turns). */
function showHint(): void {
  if (emptyHint) emptyHint.hidden = log.childElementCount > 0;
}

function setActive(chatId: string | null): void {
  active = chatId;
  stopButton.disabled = chatId === null;
  document.body.classList.toggle('busy', chatId !== null);
}

function answerFor(chatId: string): Answer {
  let answer = answers.get(chatId);
  if (!answer) {
    const element = document.createElement('section');
    element.className = 'answer streaming';
    element.dataset.chatId = chatId;
    element.setAttribute('aria-busy', 'true');
    const body = document.createElement('div');
    body.className = 'markdown';
    element.appendChild(body);
    log.appendChild(element);
    answer = { element, body, text: '', done: false, question: '' };
    answers.set(chatId, answer);
  }
  return answer;
}

function finish(answer: Answer, chatId: string, cls: string): void {
  answer.done = true;
  answer.element.classList.remove('streaming');
  answer.element.classList.add(cls);
  answer.element.setAttribute('aria-busy', 'false');
  if (active === chatId) setActive(null);
}

function appendNote(answer: Answer, cls: string, text: string): void {
  const note = document.createElement('div');
  note.className = cls;
  note.textContent = text;
  answer.element.appendChild(note);
}

function handle(msg: ToWebview): void {
  switch (msg.type) {
    case 'start': {
      const question = document.createElement('div');
      question.className = 'question';
      question.innerHTML = `<span class="who">You</span> ${escapeHtml(msg.prompt)}`;
      log.appendChild(question);
      answerFor(msg.chatId).question = msg.prompt; // sent with a code block's Apply
      setActive(msg.chatId);
      break;
    }
    case 'progress': {
      // Before the first token: the prefill's progress where the answer will be ("3,840 of 4,699 ...").
      const answer = answerFor(msg.chatId);
      if (answer.done || answer.text !== '') return;
      let line = answer.element.querySelector('.progress');
      if (!line) {
        line = document.createElement('div');
        line.className = 'progress';
        line.setAttribute('role', 'status');
        answer.element.insertBefore(line, answer.body);
      }
      line.textContent = msg.text;
      break;
    }
    case 'chunk': {
      const answer = answerFor(msg.chatId);
      if (answer.done) return;
      answer.text += msg.text;
      answer.element.querySelector('.progress')?.remove();
      answer.body.innerHTML = renderMarkdown(answer.text);
      break;
    }
    case 'tool': {
      const answer = answerFor(msg.chatId);
      if (answer.done) return;
      let steps = answer.element.querySelector('.tool-steps');
      if (!steps) {
        steps = document.createElement('div');
        steps.className = 'tool-steps';
        answer.element.insertBefore(steps, answer.body);
      }
      let step = steps.querySelector(`details.tool-step[data-id="${CSS.escape(msg.tool.id)}"]`);
      if (!step) {
        step = document.createElement('details'); // collapsed: the title says what it did
        step.className = 'tool-step';
        (step as HTMLElement).dataset.id = msg.tool.id;
        steps.appendChild(step);
      }
      step.innerHTML = renderToolStep(msg.tool);
      break;
    }
    case 'done': {
      const answer = answerFor(msg.chatId);
      answer.text = msg.text || answer.text;
      answer.element.querySelector('.progress')?.remove();
      // The citations check marks the paths the answer names: real ones link, invented ones are flagged inline.
      answer.body.innerHTML = renderMarkdown(answer.text, msg.explain?.citations);
      const edits = renderEdits(msg.edits ?? [], msg.problems ?? [], msg.verification);
      if (edits) answer.element.insertAdjacentHTML('beforeend', edits);
      const stopped = stopNote(msg);
      if (stopped) answer.element.insertAdjacentHTML('beforeend', stopped);
      if (msg.explain) {
        // Only model turns have one (Find related code does not run the model). One line, opened on click.
        const explain = document.createElement('details');
        explain.className = 'explain-context';
        explain.innerHTML = `<summary>${explainSummary(msg.explain)}</summary>${renderExplainTable(msg.explain)}`;
        answer.element.appendChild(explain);
      }
      finish(answer, msg.chatId, 'done');
      break;
    }
    case 'editResult': {
      const edit = answers.get(msg.chatId)?.element.querySelector(`.edit[data-index="${msg.index}"]`);
      if (!edit) break;
      edit.querySelectorAll('button.apply-edit, button.reject-edit').forEach((b) => {
        (b as HTMLButtonElement).disabled = true;
      });
      edit.classList.add(msg.status);
      const status = edit.querySelector('.edit-status');
      const words = { applied: 'Applied.', rejected: 'Rejected.', failed: 'Not applied: ' };
      if (status) status.textContent = words[msg.status] + (msg.message ?? '');
      break;
    }
    case 'cancelled': {
      const answer = answerFor(msg.chatId);
      if (!answer.done) {
        appendNote(answer, 'note cancelled', 'Stopped.');
        finish(answer, msg.chatId, 'cancelled');
      }
      break;
    }
    case 'error': {
      if (msg.chatId) {
        const answer = answerFor(msg.chatId);
        appendNote(answer, 'note error', msg.message);
        finish(answer, msg.chatId, 'failed');
      } else {
        const note = document.createElement('div');
        note.className = 'note error';
        note.textContent = msg.message;
        log.appendChild(note);
      }
      break;
    }
    case 'cleared': {
      log.replaceChildren();
      answers.clear();
      setActive(null);
      break;
    }
    case 'explain': {
      const section = document.createElement('section');
      section.className = 'explain-only';
      section.innerHTML = `<h3>Explain context</h3>${renderExplainTable(msg.explain)}`;
      log.appendChild(section);
      break;
    }
  }
  showHint();
  scrollToEnd();
}

function send(): void {
  const text = prompt.value.trim();
  if (!text || active !== null) return;
  prompt.value = '';
  lastDraft = '';
  vscode.postMessage({ type: 'send', prompt: text });
}

function stop(): void {
  if (active !== null) vscode.postMessage({ type: 'stop', chatId: active });
}

/** A location button (answer text, retrieved code, cited files) asks the host to open the file. */
function openLocation(event: MouseEvent): void {
  const target = event.target instanceof Element ? event.target.closest('button.loc') : null;
  if (!(target instanceof HTMLElement)) return;
  event.preventDefault();
  const { path, line } = target.dataset;
  const msg: unknown = line === undefined ? { type: 'open', path } : { type: 'open', path, line: Number(line) };
  // The same guard the host applies: only workspace-relative paths without `..`.
  if (isFromWebview(msg)) vscode.postMessage(msg);
}

/** Apply / Reject under a proposed edit: the host applies it (a WorkspaceEdit, undoable) or drops it. */
function decideEdit(event: MouseEvent): void {
  const target = event.target instanceof Element ? event.target.closest('button.apply-edit, button.reject-edit') : null;
  if (!(target instanceof HTMLButtonElement) || target.disabled) return;
  const chatId = target.closest('section.answer')?.getAttribute('data-chat-id');
  const index = Number(target.dataset.index);
  if (!chatId) return;
  target.closest('.edit')?.querySelectorAll('button.apply-edit, button.reject-edit').forEach((b) => {
    (b as HTMLButtonElement).disabled = true;
  });
  const msg: unknown = { type: target.classList.contains('apply-edit') ? 'applyEdit' : 'rejectEdit', chatId, index };
  if (isFromWebview(msg)) vscode.postMessage(msg);
}

/** Continue under a cut answer: asks the same thread to go on. */
function continueAnswer(event: MouseEvent): void {
  const target = event.target instanceof Element ? event.target.closest('button.continue') : null;
  if (!(target instanceof HTMLButtonElement) || active !== null) return;
  target.disabled = true;
  vscode.postMessage({ type: 'send', prompt: 'Continue.' });
}

/** Copy / Insert / Apply on a code block: the host writes the clipboard, inserts at the editor's cursor, or
 * previews the block replacing the editor's selection (or file) and applies it once confirmed. */
function codeAction(event: MouseEvent): void {
  const target = event.target instanceof Element
    ? event.target.closest('button.copy-code, button.insert-code, button.apply-code') : null;
  if (!(target instanceof HTMLButtonElement)) return;
  const block = target.closest('.code-block');
  const text = block?.querySelector('pre code')?.textContent ?? '';
  const type = target.classList.contains('copy-code') ? 'copyCode'
    : target.classList.contains('insert-code') ? 'insertCode' : 'applyCode';
  let msg: unknown = { type, text };
  if (type === 'applyCode' && block instanceof HTMLElement) {
    // The line before the block may name its file; the question lets the node see a rename was asked for.
    const chatId = block.closest('section.answer')?.getAttribute('data-chat-id');
    const question = chatId ? answers.get(chatId)?.question : undefined;
    const { heading, lang } = block.dataset;
    msg = { type, text, ...(heading ? { heading } : {}), ...(question ? { question } : {}), ...(lang ? { lang } : {}) };
  }
  if (isFromWebview(msg)) vscode.postMessage(msg);
}

log.addEventListener('click', openLocation);
log.addEventListener('click', codeAction);
log.addEventListener('click', decideEdit);
log.addEventListener('click', continueAnswer);
form.addEventListener('submit', (event) => {
  event.preventDefault();
  send();
});
stopButton.addEventListener('click', stop);
(document.getElementById('new-chat') as HTMLButtonElement).addEventListener('click', () => {
  vscode.postMessage({ type: 'newChat' });
});
// What is being typed goes to the host (it tells the node, debounced, so the context for the question can be
// prefilled before it is sent).
let lastDraft = '';
prompt.addEventListener('input', () => {
  const text = prompt.value.slice(0, MAX_DRAFT_CHARS);
  if (text === lastDraft) return;
  lastDraft = text;
  vscode.postMessage({ type: 'draft', text });
});
prompt.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') stop();
});
window.addEventListener('message', (event: MessageEvent<unknown>) => {
  if (isToWebview(event.data)) handle(event.data);
});

showHint();
vscode.postMessage({ type: 'ready' });
prompt.focus();
