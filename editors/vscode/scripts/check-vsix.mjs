// Checks a built .vsix: it is a zip holding the manifest, the bundled extension and the webview
// assets, and nothing from node_modules, src or the tests.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

const file = process.argv[2] ?? 'contenox.vsix';
const fail = (msg) => {
  console.error(`check-vsix: ${msg}`);
  process.exit(1);
};
if (!fs.existsSync(file) || fs.statSync(file).size < 10_000) fail(`${file} missing or too small`);

// The zip central directory lists the entries; parse it without extra dependencies.
const buf = fs.readFileSync(file);
const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
if (eocd < 0) fail(`${file} is not a zip`);
const count = buf.readUInt16LE(eocd + 10);
let offset = buf.readUInt32LE(eocd + 16);
const names = [];
for (let i = 0; i < count; i++) {
  if (buf.readUInt32LE(offset) !== 0x02014b50) fail('bad central directory');
  const nameLen = buf.readUInt16LE(offset + 28);
  const extraLen = buf.readUInt16LE(offset + 30);
  const commentLen = buf.readUInt16LE(offset + 32);
  names.push(buf.subarray(offset + 46, offset + 46 + nameLen).toString('utf8'));
  offset += 46 + nameLen + extraLen + commentLen;
}
for (const required of ['extension.vsixmanifest', 'extension/package.json', 'extension/dist/extension.js',
  'extension/media/chat.js', 'extension/media/chat.css', 'extension/media/contenox.svg', 'extension/readme.md']) {
  if (!names.some((n) => n.toLowerCase() === required.toLowerCase())) fail(`missing ${required} (has: ${names.join(', ')})`);
}
const stray = names.filter((n) => /node_modules|\/src\/|\/test\/|\.map$|\.sock/.test(n));
if (stray.length > 0) fail(`unexpected entries: ${stray.join(', ')}`);
let version = '';
try {
  version = execFileSync('node', ['-p', "require('./package.json').version"]).toString().trim();
} catch {
  // informational only
}
console.log(`check-vsix: ${file} ok (${names.length} entries, ${buf.length} bytes, version ${version})`);
