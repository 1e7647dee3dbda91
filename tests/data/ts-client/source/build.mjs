// Bundle client.mjs and everything it imports into one ESM file for `node`, with no node_modules at
// run time, and write the licences of every bundled package beside it. Run by
// scripts/build_ts_client.sh in a scratch copy of this folder after `npm ci`:
//
//   node build.mjs OUT_DIR        writes OUT_DIR/client.mjs and OUT_DIR/LICENSES.txt
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const out = path.resolve(process.argv[2] ?? '.');
const options = {
    entryPoints: ['client.mjs'],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node18',
    minify: true,
    legalComments: 'none', // the licences are in LICENSES.txt, whole
    // CommonJS inside an ESM bundle (cross-spawn, ajv, ...) still calls `require` for Node's own
    // modules: give it one.
    banner: { js: "import { createRequire as __kaeruRequire } from 'node:module'; const require = __kaeruRequire(import.meta.url);" },
    metafile: true,
    write: false,
    logLevel: 'warning',
};

// The package a bundled file belongs to: the innermost node_modules/<name> (or @scope/name).
function packageOf(input) {
    const parts = input.split('/');
    const at = parts.lastIndexOf('node_modules');
    if (at < 0) return null;
    const name = parts[at + 1].startsWith('@') ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1];
    return { name, dir: parts.slice(0, at + 1 + name.split('/').length).join('/') };
}

// First pass: which packages end up in the bundle.
const first = await build(options);
const packages = new Map();
for (const input of Object.keys(first.metafile.inputs)) {
    const found = packageOf(input);
    if (found && !packages.has(found.dir)) packages.set(found.dir, found);
}
const bundled = [...packages.values()]
    .map(({ name, dir }) => {
        const meta = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
        const licenceFile = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
        return { name, version: meta.version, license: meta.license ?? null, dir, licenceFile };
    })
    .sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));

// Second pass: the same bundle, told its own contents (the client reports them).
const versions = Object.fromEntries(bundled.map((p) => [p.name, p.version]));
const second = await build({ ...options, define: { __KAERU_BUNDLED__: JSON.stringify(versions) } });
const [file] = second.outputFiles;
fs.writeFileSync(path.join(out, 'client.mjs'), file.contents);

const sections = bundled.map((p) => {
    const header = `${p.name} ${p.version} (license: ${p.license ?? 'not stated'})`;
    const text = p.licenceFile
        ? fs.readFileSync(path.join(p.dir, p.licenceFile), 'utf8').trim()
        : `No licence file in the package; its package.json states: ${p.license}.`;
    return `${'='.repeat(78)}\n${header}\n${'='.repeat(78)}\n\n${text}\n`;
});
const licences = [
    'Licences of the packages bundled into client.mjs (found by esbuild\'s metafile; see README.md).',
    'client.mjs\'s own code (source/client.mjs) is part of kaeru-memory (MIT).',
    '',
    ...sections,
].join('\n');
fs.writeFileSync(path.join(out, 'LICENSES.txt'), licences);

const missing = bundled.filter((p) => !p.licenceFile).map((p) => p.name);
process.stdout.write(
    `${JSON.stringify({ bytes: file.contents.length, packages: versions, without_licence_file: missing }, null, 2)}\n`,
);
