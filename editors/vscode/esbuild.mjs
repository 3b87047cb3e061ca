// Bundles the extension host code (dist/extension.js, CommonJS, vscode external) and the chat
// webview script (media/chat.js, browser IIFE).
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'info' };

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  }),
  esbuild.build({
    ...common,
    entryPoints: ['src/webview/main.ts'],
    outfile: 'media/chat.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    sourcemap: false,
  }),
]);
