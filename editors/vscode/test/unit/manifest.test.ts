// package.json's contributions as a user meets them: menu titles, where Pin / Unpin show, the chat's own place.
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ChatPanel } from '../../src/chatPanel';
import { PINNED_CONTEXT } from '../../src/pinsView';

const root = new URL('../../', import.meta.url);
const manifest = JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8'));
const contributes = manifest.contributes;
interface Command { command: string; title: string; category?: string }
interface MenuItem { command: string; when?: string }
const commands = new Map<string, Command>(contributes.commands.map((c: Command) => [c.command, c]));
const menu = (name: string): MenuItem[] => contributes.menus[name];

describe('package.json', () => {
  it("menu items carry the product's name, in title case", () => {
    for (const name of ['editor/context', 'explorer/context']) {
      for (const item of menu(name)) {
        const { title, category } = commands.get(item.command)!;
        expect(category, item.command).toBeUndefined(); // a menu does not show the category
        expect(title).toMatch(/^Contenox: /);
        const words = title.replace(/^Contenox: /, '').replace(/…$/, '').split(' ');
        for (const word of words) expect(word, title).toMatch(/^[A-Z]/);
      }
    }
    expect(commands.get('contenox.explainSelectionCmd')!.title).toBe('Contenox: Explain Selection');
    expect(commands.get('contenox.askSelectionCmd')!.title).toBe('Contenox: Ask About Selection…');
  });

  it('Pin shows only for a file not pinned, Unpin only for a pinned one', () => {
    for (const name of ['editor/context', 'explorer/context']) {
      const pin = menu(name).find((i) => i.command === 'contenox.pinFile')!;
      const unpin = menu(name).find((i) => i.command === 'contenox.unpinFile')!;
      expect(pin.when).toContain(`resourcePath not in ${PINNED_CONTEXT}`);
      expect(unpin.when).toContain(`resourcePath in ${PINNED_CONTEXT}`);
      expect(unpin.when).not.toContain('not in');
    }
  });

  it('gives the chat its own activity-bar container and restores its panel after a reload', () => {
    const container = contributes.viewsContainers.activitybar.find((c: { id: string }) => c.id === 'contenox');
    expect(container.title).toBe('Contenox');
    expect(fs.existsSync(new URL(container.icon, root))).toBe(true);
    expect(fs.readFileSync(new URL('.vscodeignore', root), 'utf8')).toContain(`!${container.icon}`);
    expect(contributes.views.contenox).toEqual([expect.objectContaining({ type: 'webview', id: ChatPanel.viewId })]);
    expect(manifest.activationEvents).toContain(`onWebviewPanel:${ChatPanel.viewType}`);
  });
});
