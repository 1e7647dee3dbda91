// kaeru's tools driven by the official TypeScript MCP SDK (@modelcontextprotocol/sdk), the client
// Claude Code, Claude Desktop, Cursor and VS Code are built on. Its `Client` compiles every listed
// output schema with AJV (`listTools`) and validates each result's `structuredContent` against it
// (`callTool`): a schema AJV cannot compile, or an answer it does not accept, is an error there.
//
//   node client.mjs stdio INITIATIVE COMMAND [ARG...]   spawn COMMAND (e.g. kaeru serve) over stdio
//   node client.mjs http INITIATIVE URL                 streamable HTTP at URL (e.g. .../mcp)
//
// The server's child process gets this process's whole environment (KAERU_VAULT, ...). Over HTTP,
// KAERU_CLIENT_TOKEN (if set) is sent as `Authorization: Bearer ...`. KAERU_CLIENT_AJV=strict hands
// the SDK the client's own AJV, as the SDK's documentation shows, in place of its default one.
// Writes one JSON report to stdout: every call with its arguments, whether the SDK accepted it
// (`ok`, else `error`), the result's `isError`, text and structuredContent, and the validator.
// Exit 0 once connected, whatever the calls did; 2 when it could not connect or list the tools
// (the report then says why).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';

// The bundled packages' names and versions, put in by the build (scripts/build_ts_client.sh).
const BUNDLED = typeof __KAERU_BUNDLED__ === 'undefined' ? { unbundled: true } : __KAERU_BUNDLED__;

const [mode, initiative, ...rest] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !initiative || rest.length === 0) {
    process.stderr.write('usage: client.mjs stdio INITIATIVE COMMAND [ARG...] | http INITIATIVE URL\n');
    process.exit(64);
}

const report = {
    bundled: BUNDLED,
    transport: mode,
    validator: process.env.KAERU_CLIENT_AJV === 'strict' ? 'strict' : 'default',
    token: Boolean(process.env.KAERU_CLIENT_TOKEN),
    protocolVersion: null,
    server: null,
    tools: [],
    outputSchemas: [],
    calls: [],
    uncalled: [],
    extras: {},
    fatal: null,
};

function transportFor() {
    if (mode === 'stdio') {
        const [command, ...args] = rest;
        return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'inherit' });
    }
    const headers = {};
    if (process.env.KAERU_CLIENT_TOKEN) headers.Authorization = `Bearer ${process.env.KAERU_CLIENT_TOKEN}`;
    return new StreamableHTTPClientTransport(new URL(rest[0]), { requestInit: { headers } });
}

function message(error) {
    return error instanceof Error ? error.message : String(error);
}

// The SDK's documented custom validator (`@modelcontextprotocol/sdk/validation/ajv`): `new Ajv({
// validateFormats: true })` with ajv-formats. Unlike the SDK's default instance (strict off, schemas
// not checked against a meta-schema), this AJV is strict and checks every output schema against the
// meta-schema its `$schema` names, knowing only draft-07's: `listTools` throws on one it cannot
// check or compile, as it would in such a client.
function validatorOptions() {
    if (report.validator !== 'strict') return undefined;
    const ajv = new Ajv({ validateFormats: true });
    (ajvFormats.default ?? ajvFormats)(ajv);
    return { jsonSchemaValidator: new AjvJsonSchemaValidator(ajv) };
}

const client = new Client({ name: 'kaeru-ts-client-test', version: '1.0.0' }, validatorOptions());
const transport = transportFor();
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
    report.protocolVersion = version;
    setVersion?.(version);
};

async function call(step, tool, args, options = undefined) {
    const entry = { step, tool, arguments: args, ok: false, error: null, isError: null, text: null, structuredContent: null };
    try {
        const result = await client.callTool({ name: tool, arguments: args }, undefined, options);
        entry.ok = true;
        entry.isError = result.isError ?? false;
        entry.text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
        entry.structuredContent = result.structuredContent ?? null;
    } catch (error) {
        entry.error = message(error);
    }
    report.calls.push(entry);
    return entry;
}

// A written node's id, from the envelope or, where the server sends none (KAERU_STRUCTURED=off),
// from the text block as a model reads it (`id=...`); a revision likewise (`rev=...`).
const id = (entry) => entry.structuredContent?.data?.primary?.id ?? entry.text?.match(/\bid=([0-9a-f-]{36})/)?.[1] ?? 'missing';
const node = (entry) => ({ id: id(entry) });
const revision = (entry) =>
    entry.structuredContent?.data?.hits?.[0]?.revision ?? entry.text?.match(/\brev=([^\s,;)]+)/)?.[1] ?? 'missing';

async function extra(name, fn) {
    try {
        report.extras[name] = { ok: true, value: await fn() };
    } catch (error) {
        report.extras[name] = { ok: false, error: message(error) };
    }
}

async function scenario() {
    const I = initiative;
    const decision = await call('note', 'note', {
        initiative: I,
        kind: 'decision',
        text: 'Deploys use blue-green releases zqtsone: the old colour stays up until the health check passes.',
        tags: ['deploy'],
        request_id: `${I}-note-1`,
    });
    await call('note_replayed', 'note', {
        initiative: I,
        kind: 'decision',
        text: 'Deploys use blue-green releases zqtsone: the old colour stays up until the health check passes.',
        tags: ['deploy'],
        request_id: `${I}-note-1`,
    });
    const reference = await call('note_reference', 'note', {
        initiative: I,
        kind: 'reference',
        text: 'HTTP semantics, the part about idempotent methods',
        source: 'A request method is considered idempotent if the intended effect on the server of multiple identical requests is the same as for a single request.',
        url: 'https://www.rfc-editor.org/rfc/rfc9110#section-9.2.2',
    });
    await call('initiatives', 'initiatives', { prefix: I });
    await call('search', 'search', { initiatives: [I], text: 'zqtsone' });
    const read = await call('read', 'read', { initiative: I, node: node(decision) });
    await call('revise', 'revise', {
        initiative: I,
        node: node(decision),
        patch: { body: 'Deploys use blue-green releases zqtstwo: traffic moves only after the health check passes.' },
        expected_revision: revision(read),
        request_id: `${I}-revise-1`,
    });
    await call('read_after_revise', 'read', { initiative: I, node: node(decision), neighbours: true });
    await call('search_after_revise', 'search', { initiatives: [I], text: 'zqtstwo', filters: { tags: ['deploy'] } });
    // With a progress token in `_meta` (the SDK adds one for `onprogress`): the server's SDK path,
    // not its plain-call fast path.
    await call('search_with_progress', 'search', { initiatives: [I], text: 'zqtstwo' }, { onprogress: () => {} });
    await call('recall', 'recall', { initiatives: [I], query: 'how do we release a deploy?', task_intent: 'explain_decision' });
    await call('context', 'context', { initiative: I });
    await call('timeline', 'timeline', { initiatives: [I] });
    const hypothesis = await call('claim', 'claim', {
        initiative: I,
        text: 'Blue-green releases halve the downtime of a deploy',
        about: node(decision),
        evidence: { method: 'Compare the downtime of the last ten deploys with the ten before' },
    });
    await call('verdict', 'verdict', {
        initiative: I,
        hypothesis: node(hypothesis),
        status: 'supported',
        evidence: { method: 'Downtime fell from 40 s to 18 s a deploy' },
    });
    await call('replace', 'replace', {
        initiative: I,
        node: node(reference),
        source: 'A request method is considered idempotent if the intended effect on the server of multiple identical requests with that method is the same as the effect for a single such request.',
    });
    await call('link', 'link', { initiative: I, from: node(reference), to: node(decision), edge_type: 'refers_to', weight: 0.7 });
    await call('trail', 'trail', { initiative: I, node: node(decision), kind: 'history' });
    const task = await call('task', 'task', { initiative: I, text: 'Write the rollback runbook', due: '3d', tags: ['deploy'] });
    await call('task_update', 'task_update', { initiative: I, task: node(task), status: 'done' });
    await call('slot', 'slot', { initiative: I, slot: 'handoff', node: node(decision) });
    await call('current_state', 'current_state', { initiative: I, slot: 'handoff' });
    await call('review', 'review', { initiative: I, action: 'flag', target: node(reference), reason: 'The RFC may have an erratum here' });
    await call('layer', 'layer', { initiative: I, nodes: [node(decision)], layer: 'hot', pin: true });
    const old = await call('note_to_supersede', 'note', { initiative: I, text: 'The staging database is PostgreSQL 14' });
    await call('evolve', 'evolve', { initiative: I, mode: 'supersede', source: node(old), new_body: 'The staging database is PostgreSQL 16' });
    const mistake = await call('note_to_forget', 'note', { initiative: I, kind: 'jot', text: 'a jot written into the wrong project' });
    await call('forget', 'forget', { initiative: I, node: node(mistake), reason: 'written into the wrong project' });
    await call('reflect', 'reflect', { initiative: I });
    await call('note_elsewhere', 'note', { initiative: `${I}-draft`, text: 'A scratch initiative to rename' });
    await call('initiative', 'initiative', { initiative: `${I}-draft`, action: 'rename', to: `${I}-renamed` });
    await call('archive', 'archive', { action: 'export', format: 'amg', path: `${I}.amg`, initiatives: [I] });
    // Refused by the server's own validation: a `rejected` envelope naming the field, not an error.
    await call('invalid_note', 'note', { initiative: I, text: 42 });
    await call('invalid_search', 'search', { initiatives: [I], text: 'zqtstwo', limit: 500 });
}

let code = 0;
try {
    await client.connect(transport);
    report.server = client.getServerVersion() ?? null;
    const listed = await client.listTools();
    report.tools = listed.tools.map((t) => t.name);
    report.outputSchemas = listed.tools.filter((t) => t.outputSchema).map((t) => t.name);
    await scenario();
    const called = new Set(report.calls.map((c) => c.tool));
    report.uncalled = report.tools.filter((name) => !called.has(name));
    await extra('ping', () => client.ping());
    await extra('prompts', async () => (await client.listPrompts()).prompts.map((p) => p.name));
    await extra('prompt_resume', async () => (await client.getPrompt({ name: 'resume', arguments: { initiative } })).messages.length);
    await extra('resources', async () => (await client.listResources()).resources.map((r) => r.uri));
    await extra('resource_templates', async () => (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate));
    await extra('read_initiatives', async () => (await client.readResource({ uri: 'kaeru://initiatives' })).contents.length);
} catch (error) {
    report.fatal = message(error);
    code = 2;
} finally {
    try {
        await client.close();
    } catch (error) {
        report.closeError = message(error);
    }
}
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exitCode = code;
