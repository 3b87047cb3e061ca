import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { missingMessage, resolveExecutable } from '../../src/executable';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'contenox-exe-'));
const exe = path.join(dir, 'contenox');
fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
const plain = path.join(dir, 'not-exec');
fs.writeFileSync(plain, '', { mode: 0o644 });
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('resolveExecutable', () => {
  it('finds a bare name on PATH', () => {
    expect(resolveExecutable('contenox', { PATH: `/nonexistent${path.delimiter}${dir}` })).toBe(exe);
  });
  it('accepts an absolute path and ~', () => {
    expect(resolveExecutable(exe, { PATH: '' })).toBe(exe);
    expect(resolveExecutable('~/contenox', { PATH: '' }, dir)).toBe(exe);
  });
  it('rejects missing and non-executable files', () => {
    expect(resolveExecutable('contenox', { PATH: '/nonexistent' })).toBeUndefined();
    expect(resolveExecutable(plain, { PATH: '' })).toBeUndefined();
    expect(resolveExecutable(dir, { PATH: '' })).toBeUndefined();
  });
  it('the missing message carries the install command and the setting', () => {
    const m = missingMessage('/opt/contenox');
    expect(m).toContain('pipx install ./');
    expect(m).toContain('contenox.path');
    expect(m).toContain('/opt/contenox');
  });
});
