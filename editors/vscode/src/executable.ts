// Finding the `contenox` executable named by the `contenox.path` setting.

import * as fs from 'node:fs';
import * as path from 'node:path';

/** Works today in a clone of the repository; `pipx install contenox` once the package is on PyPI. */
export const INSTALL_COMMAND = 'pipx install ./  # in a clone of the Contenox repository';

export function isExecutableFile(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (process.platform === 'win32') return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolve `setting` ("contenox", "~/bin/contenox", "/abs/contenox") to an executable path,
 * searching PATH for bare names. Returns undefined when there is none.
 */
export function resolveExecutable(
  setting: string,
  env: NodeJS.ProcessEnv = process.env,
  home: string = env.HOME ?? env.USERPROFILE ?? '',
): string | undefined {
  let name = setting.trim() || 'contenox';
  if (name.startsWith('~/') && home) name = path.join(home, name.slice(2));
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').concat(['']) : [''];
  if (name.includes('/') || name.includes(path.sep)) {
    const abs = path.resolve(name);
    return exts.map((e) => abs + e).find(isExecutableFile);
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

export function missingMessage(setting: string): string {
  return `Contenox: the executable "${setting}" was not found. Install it with \`pipx install ./\` in a clone ` +
    'of the Contenox repository (`pipx install contenox` once it is published on PyPI), then run ' +
    '`contenox init` to fetch the model — or point the `contenox.path` setting at it (e.g. the clone\'s ' +
    '`.venv/bin/contenox` after `scripts/install`).';
}
