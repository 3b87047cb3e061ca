import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const mock = fileURLToPath(new URL('./test/mocks/vscode.ts', import.meta.url));

export default defineConfig({
  test: {
    fileParallelism: false,
    projects: [
      {
        resolve: { alias: { vscode: mock } },
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node' },
      },
      {
        // Real `contenox lsp --stdio` (model load + generation on CPU): generous timeouts.
        test: {
          name: 'protocol',
          include: ['test/protocol/**/*.test.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 240_000,
        },
      },
      {
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Opt-in (npm run test:e2e): code-server + the .vsix + the real node (workbench.test.ts on the
        // test model, inline.test.ts on the FIM model, pulled in beforeAll when missing: a long hook).
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 400_000,
          hookTimeout: 900_000,
        },
      },
    ],
  },
});
