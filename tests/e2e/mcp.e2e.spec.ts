import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MEMORY_TOOLS } from '@engram/gateway-engine';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { because } from '@engram/testing';
import { repoRoot } from '../support/compose.js';
import { contentText, startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import {
  claudeCodeMcpCommands,
  claudeCodeRecipe,
  claudeDesktopRecipe,
  codexRecipe,
  cursorRecipe,
  openCodeRecipe,
  type HttpRecipe,
  type StdioRecipe,
} from '../support/mcp-client-config.js';
import { say } from '../support/scripted-openai-upstream.js';
import { startGateway, type RunningGateway } from '../support/stack.js';

const KEYS = 'alpha-key=alpha+shared,admin-key=*';

interface Connection {
  /** Connects a fresh MCP session (the SDK's Client) with this key to this pool (none: the key's first pool). */
  connect(options: { key?: string; pool?: string; requestId?: string }): Promise<Client>;
}

describe('MCP server', () => {
  let stack: GatewayStack;
  let cwd: string;

  beforeAll(async () => {
    stack = await startGatewayStack({
      responder: () => say('ok'),
      gatewayEnv: { ENGRAM_API_KEYS: KEYS, UPSTREAM_API_KEY: 'sk-upstream', LOG_LEVEL: 'info' },
    });
    // The bridge runs where a desktop client launches it: no data dir, no repository around it.
    cwd = mkdtempSync(join(tmpdir(), 'engram-mcp-client-'));
  });
  afterAll(async () => {
    await stack?.stop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  const overHttp: Connection = {
    async connect({ key, pool, requestId }) {
      const url = new URL(pool ? `${stack.gateway.url}/pools/${pool}/mcp` : `${stack.gateway.url}/mcp`);
      const headers: Record<string, string> = {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(requestId ? { 'x-request-id': requestId } : {}),
      };
      const client = new Client({ name: 'e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
      return client;
    },
  };
  const overStdio: Connection = {
    async connect({ key, pool }) {
      const args = [
        join(repoRoot, 'apps/memory/bin/engram.js'),
        'mcp',
        '--url',
        stack.gateway.url,
        ...(pool ? ['--pool', pool] : []),
        ...(key ? ['--key', key] : []),
      ];
      const client = new Client({ name: 'e2e', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args, cwd, env: { PATH: process.env['PATH'] ?? '' }, stderr: 'pipe' }),
      );
      return client;
    },
  };

  const text = (result: unknown): string => ((result as CallToolResult).content[0] as { text: string }).text;
  const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    return { text: text(result), isError: result.isError === true };
  };
  const idIn = (line: string): string => /\[id:([^\]]+)\]/.exec(line)![1]!;
  const events = async (pool: string): Promise<{ type: string; actor: string; data: { id?: string } }[]> =>
    (
      (await (
        await fetch(`${stack.gateway.url}/engram/pools/${pool}/events?after=0&limit=1000`, { headers: { authorization: 'Bearer admin-key' } })
      ).json()) as { data: { type: string; actor: string; data: { id?: string } }[] }
    ).data;

  describe.each([
    ['Streamable HTTP', () => overHttp, 'alpha'],
    ['the stdio bridge (npx engram mcp)', () => overStdio, 'shared'],
  ] as const)('over %s', (_transport, connection, pool) => {
    const sessions: Client[] = [];
    const open = async (options: { key?: string; pool?: string; requestId?: string } = {}): Promise<Client> => {
      const client = await connection().connect({ key: 'alpha-key', pool, ...options });
      sessions.push(client);
      return client;
    };
    afterAll(async () => {
      await Promise.allSettled(sessions.map((client) => client.close()));
    });

    it('lists the six memory tools with the schemas the gateway gives the model', async () => {
      const { tools } = await (await open()).listTools();
      expect(tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }))).toEqual(
        MEMORY_TOOLS.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.parameters })),
      );
    });

    it('finds in a second session what the first stored, citing its id, with actor mcp on the events', async () => {
      const first = await open();
      const stored = await call(first, 'store_memory', { content: `The ${pool} build runs on a Raspberry Pi 5`, category: 'environment' });
      expect(stored).toEqual({ text: expect.stringMatching(/^Stored \[id:[\w-]+\] The .* build runs on a Raspberry Pi 5$/), isError: false });
      const id = idIn(stored.text);
      await first.close();

      const second = await open();
      const found = await call(second, 'memory_search', { query: 'Raspberry Pi' });
      expect(found.isError).toBe(false);
      expect(found.text).toMatch(
        new RegExp(`^Found 1:\\n\\[id:${id}\\] The ${pool} build runs on a Raspberry Pi 5 \\(environment, today, conf \\d\\.\\d\\)$`),
      );
      const listed = await call(second, 'memory_list', { category: 'environment' });
      expect(listed.text).toContain(`[id:${id}] The ${pool} build runs on a Raspberry Pi 5`);

      const mine = (await events(pool)).filter((event) => event.data.id === id);
      expect(mine.map((event) => [event.type, event.actor])).toEqual(expect.arrayContaining([['memory.stored', 'mcp']]));
    });

    it('updates, refreshes and deletes an entry by its id', async () => {
      const client = await open();
      const id = idIn((await call(client, 'store_memory', { content: 'Deploys go out on Tuesdays' })).text);

      expect(await call(client, 'memory_update', { id, content: 'Deploys go out on Thursdays', category: 'decision' })).toEqual({
        text: `Updated [id:${id}] Deploys go out on Thursdays`,
        isError: false,
      });
      expect(await call(client, 'memory_refresh', { id: `[id:${id}]` })).toEqual({
        text: `Refreshed [id:${id}] Deploys go out on Thursdays`,
        isError: false,
      });
      expect(await call(client, 'memory_delete', { id, reason: 'no fixed day any more' })).toEqual({
        text: `Deleted [id:${id}] (archived; a person can restore it).`,
        isError: false,
      });
      expect((await call(client, 'memory_search', { query: 'Thursdays' })).text).toBe('No memories match "Thursdays".');

      // A later session storing the first text again (its call numbered like the first one) gets a live entry, not the deleted one.
      const again = await open();
      const restored = idIn((await call(again, 'store_memory', { content: 'Deploys go out on Tuesdays' })).text);
      expect(restored).not.toBe(id);
      expect((await call(again, 'memory_search', { query: 'Tuesdays' })).text).toContain(`[id:${restored}] Deploys go out on Tuesdays`);

      // References are written in batches a moment later; the writes are what the calls did.
      const mine = (await events(pool)).filter((event) => event.data.id === id && event.type !== 'memory.referenced');
      expect(mine.map((event) => event.type)).toEqual(['memory.stored', 'memory.updated', 'memory.deleted']);
      expect(new Set(mine.map((event) => event.actor))).toEqual(new Set(['mcp']));
    });

    it('answers malformed and impossible calls with tool errors the model can read, and keeps serving', async () => {
      const client = await open();
      const bad = await call(client, 'memory_update', { content: 42 });
      expect(bad.isError).toBe(true);
      expect(bad.text).toMatch(/^Error: invalid arguments for memory_update \(id: .*content: .*\)\. Check the tool's schema and call it again\.$/);
      expect(await call(client, 'memory_delete', { id: 'no-such-id' })).toEqual({
        text: expect.stringMatching(/^Error: .*no-such-id.*Use an id from a \[id:\.\.\.\] citation\.$/),
        isError: true,
      });
      expect(await call(client, 'memory_update', { id: 'abcd' })).toEqual({
        text: 'Error: memory_update needs at least one of content, category, confirmed.',
        isError: true,
      });
      expect(await call(client, 'forget_everything', {})).toEqual({ text: 'Error: forget_everything is not a memory tool.', isError: true });
      expect((await call(client, 'memory_list', {})).isError).toBe(false);
    });

    it("serves the pool's Tier 1 block and entries as resources, and nothing of another pool", async () => {
      const client = await open();
      const id = idIn(
        (await call(client, 'store_memory', { content: `In ${pool}, answers are short and in English`, type: 'USER', category: 'preference' })).text,
      );

      const { resources } = await client.listResources();
      expect(resources[0]).toMatchObject({ uri: `engram://pools/${pool}/tier1`, mimeType: 'text/plain' });
      expect(resources.map((resource) => resource.uri)).toContain(`engram://pools/${pool}/memories/${id}`);

      const tier1 = await client.readResource({ uri: `engram://pools/${pool}/tier1` });
      expect((tier1.contents[0] as { text: string }).text).toContain(`In ${pool}, answers are short and in English`);
      const entry = await client.readResource({ uri: `engram://pools/${pool}/memories/${id}` });
      expect(JSON.parse((entry.contents[0] as { text: string }).text)).toMatchObject({ id, pool, type: 'USER', category: 'preference' });

      await expect(client.readResource({ uri: 'engram://pools/beta/tier1' })).rejects.toThrow(/No resource engram:\/\/pools\/beta\/tier1 here/);
      await expect(client.readResource({ uri: `engram://pools/${pool}/memories/nope1234` })).rejects.toThrow(/No memory at/);
    });

    it("puts what it stored into the chat surface's Tier 1 for the same pool", async () => {
      const client = await open();
      await call(client, 'store_memory', {
        content: `The ${pool} team writes commit messages in the imperative`,
        type: 'USER',
        category: 'preference',
      });
      await stack.client({ apiKey: 'alpha-key', pool }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      const system = stack.upstream.chatRequests.at(-1)?.body.messages[0];
      expect(system?.role).toBe('system');
      expect(contentText(system?.content)).toContain(`The ${pool} team writes commit messages in the imperative`);
    });

    it('refuses a pool the key was not granted (403) and a missing key (401), saying why', async () => {
      const refusal = (options: { key?: string; pool: string }): Promise<{ status: number; message: string }> =>
        connection()
          .connect(options)
          .then(
            () => ({ status: 200, message: '' }),
            // The HTTP transport carries the status; the bridge puts it in the words of its JSON-RPC error.
            (error: Error & { code?: number }) => ({
              status: error instanceof StreamableHTTPError ? error.code! : Number(/answered (\d{3})/.exec(error.message)?.[1]),
              message: error.message,
            }),
          );
      expect(await refusal({ key: 'alpha-key', pool: 'beta' })).toEqual({
        status: 403,
        message: expect.stringContaining('this API key is not granted that pool'),
      });
      expect(await refusal({ pool })).toEqual({ status: 401, message: expect.stringContaining('a valid Engram API key is required') });
      expect(await refusal({ key: 'wrong-key', pool })).toMatchObject({ status: 401 });
    });
  });

  it('answers a missing or wrong key with a Bearer challenge, and tells an OAuth client which header to set instead', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${stack.gateway.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const missing = await post({});
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="engram"');
    expect(await missing.json()).toEqual({
      error: expect.objectContaining({ code: 'invalid_api_key', message: expect.stringContaining('API key') }),
    });
    const wrong = await post({ authorization: 'Bearer wrong-key' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="engram", error="invalid_token"');
    // No OAuth: the discovery documents are a quick 404, with or without a key.
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
    ]) {
      const status = (await fetch(`${stack.gateway.url}${path}`)).status;
      because(path, () => expect(status).toBe(404));
    }

    // An OAuth-capable client (as Claude Code's) meets the 401 with discovery, then dynamic client registration:
    // what it reports is Engram's description of the header to configure.
    const registered: unknown[] = [];
    const oauthClient: OAuthClientProvider = {
      redirectUrl: 'http://127.0.0.1:1/callback',
      clientMetadata: { client_name: 'e2e', redirect_uris: ['http://127.0.0.1:1/callback'] },
      clientInformation: () => undefined,
      saveClientInformation: (information) => void registered.push(information),
      tokens: () => undefined,
      saveTokens: () => undefined,
      redirectToAuthorization: () => undefined,
      saveCodeVerifier: () => undefined,
      codeVerifier: () => 'unused',
    };
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.gateway.url}/mcp`), {
      authProvider: oauthClient,
      requestInit: { headers: { authorization: 'Bearer wrong-key' } },
    });
    await expect(client.connect(transport)).rejects.toThrow(
      /Engram does not use OAuth: configure this MCP server with the header "Authorization: Bearer <Engram API key>"/,
    );
    expect(registered).toEqual([]);
  });

  it('keeps pools apart: a search in beta finds nothing stored in alpha', async () => {
    const alpha = await overHttp.connect({ key: 'alpha-key', pool: 'alpha' });
    await call(alpha, 'store_memory', { content: 'Alpha keeps its secrets in Vault' });
    const beta = await overHttp.connect({ key: 'admin-key', pool: 'beta' });
    expect(await call(beta, 'memory_search', { query: 'Vault' })).toEqual({ text: 'No memories match "Vault".', isError: false });
    await Promise.all([alpha.close(), beta.close()]);
  });

  it('logs each tool call with the request id of the HTTP request', async () => {
    const client = await overHttp.connect({ key: 'alpha-key', requestId: 'mcp-log-check-1' });
    await call(client, 'memory_list', {});
    await client.close();
    const logged = (): string | undefined =>
      stack.gateway.process
        .output()
        .split('\n')
        .find((entry) => entry.includes('"mcp tool call"') && entry.includes('mcp-log-check-1'));
    // The gateway's stdout reaches this process a moment after the answer.
    for (let waited = 0; logged() === undefined && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(JSON.parse(logged() ?? '{}')).toMatchObject({ requestId: 'mcp-log-check-1', pool: 'alpha', tool: 'memory_list', isError: false });
  });

  it('answers GET with 405 (stateless: no server stream) and a body that is not JSON, or nests too deep, with a JSON-RPC parse error', async () => {
    const headers = { authorization: 'Bearer alpha-key' };
    const get = await fetch(`${stack.gateway.url}/mcp`, { headers: { ...headers, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    const post = await fetch(`${stack.gateway.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{not json',
    });
    expect(post.status).toBe(400);
    expect(await post.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the request body is not valid JSON.' } });
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":${'['.repeat(5_000)}${']'.repeat(5_000)}}}}`;
    const tooDeep = await fetch(`${stack.gateway.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: deep,
    });
    expect(tooDeep.status).toBe(400);
    expect(await tooDeep.json()).toMatchObject({ error: { code: -32700, message: expect.stringContaining('deeper than 128 levels') } });
    expect((await fetch(`${stack.gateway.url}/pools/..%2Fetc/mcp`, { method: 'POST', headers, body: '{}' })).status).toBe(400);
  });

  it('refuses a web page that is not on this machine (DNS rebinding), and serves one that is', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
    });
    const post = (origin: string) =>
      fetch(`${stack.gateway.url}/mcp`, {
        method: 'POST',
        headers: { authorization: 'Bearer alpha-key', origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: initialize,
      });
    const rebound = await post('http://evil.example:8080');
    expect(rebound.status).toBe(403);
    expect(await rebound.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { message: expect.stringContaining('only accepted from localhost origins') },
    });
    expect((await post('http://localhost:6274')).status).toBe(200);
  });

  describe('the README recipes, as each client would send them', () => {
    let openGateway: RunningGateway;
    const env = { ENGRAM_API_KEY: 'alpha-key' };

    beforeAll(async () => {
      openGateway = await startGateway({ UPSTREAM_BASE_URL: stack.upstream.baseUrl, REDIS_URL: stack.redis.url, ...stack.memory!.clientEnv });
    });
    afterAll(async () => {
      await openGateway?.stop();
    });

    /** Stores a fact through the recipe and finds it again: the recipe reached the pool it should. */
    const roundTrip = async (client: Client, fact: string): Promise<string> => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(MEMORY_TOOLS.map((tool) => tool.name).sort());
      expect((await call(client, 'store_memory', { content: fact })).isError).toBe(false);
      const found = await call(client, 'memory_search', { query: fact });
      await client.close();
      return found.text;
    };
    const viaHttp = async (recipe: HttpRecipe): Promise<Client> => {
      const client = new Client({ name: 'readme-recipe', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(recipe.url), { requestInit: { headers: recipe.headers } }));
      return client;
    };
    const viaStdio = async (recipe: StdioRecipe): Promise<Client> => {
      const client = new Client({ name: 'readme-recipe', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: recipe.command,
          args: [...recipe.args],
          cwd,
          env: { PATH: process.env['PATH'] ?? '', ...recipe.env },
          stderr: 'pipe',
        }),
      );
      return client;
    };

    it("Claude Code: the open-mode line works in open mode, the keyed line reaches the key's pool", async () => {
      const [openLine, keyedLine] = claudeCodeMcpCommands();
      expect(keyedLine).toContain('--header');
      expect(await roundTrip(await viaHttp(claudeCodeRecipe(openLine!, { origin: openGateway.url, env })), 'Claude Code recipe fact open')).toContain(
        '] Claude Code recipe fact open',
      );
      expect(
        await roundTrip(await viaHttp(claudeCodeRecipe(keyedLine!, { origin: stack.gateway.url, env })), 'Claude Code recipe fact keyed'),
      ).toContain('] Claude Code recipe fact keyed');
      await expect(viaHttp(claudeCodeRecipe(openLine!, { origin: stack.gateway.url, env }))).rejects.toMatchObject({ code: 401 });
    });

    it.each([
      ['Cursor', cursorRecipe],
      ['Codex', codexRecipe],
      ['OpenCode', openCodeRecipe],
    ] as const)('%s: the configuration works with a key and, without it, in open mode', async (name, recipe) => {
      expect(await roundTrip(await viaHttp(recipe({ origin: stack.gateway.url, env })), `${name} recipe fact keyed`)).toContain(
        `] ${name} recipe fact keyed`,
      );
      expect(await roundTrip(await viaHttp(recipe({ origin: openGateway.url, env, open: true })), `${name} recipe fact open`)).toContain(
        `] ${name} recipe fact open`,
      );
      await expect(viaHttp(recipe({ origin: stack.gateway.url, env, open: true }))).rejects.toMatchObject({ code: 401 });
    });

    it('Claude Desktop: the configured command bridges stdio to the gateway, with a key and in open mode', async () => {
      expect(await roundTrip(await viaStdio(claudeDesktopRecipe({ origin: stack.gateway.url, env })), 'Claude Desktop recipe fact keyed')).toContain(
        '] Claude Desktop recipe fact keyed',
      );
      expect(
        await roundTrip(await viaStdio(claudeDesktopRecipe({ origin: openGateway.url, env, open: true })), 'Claude Desktop recipe fact open'),
      ).toContain('] Claude Desktop recipe fact open');
    });

    it('every recipe stored in the pool its key or mode implies', async () => {
      const recipeFacts = async (gateway: string, pool: string, key?: string): Promise<string[]> =>
        (
          (await (
            await fetch(`${gateway}/engram/pools/${pool}/memories?limit=500`, { headers: key ? { authorization: `Bearer ${key}` } : {} })
          ).json()) as { data: { content: string }[] }
        ).data
          .map((entry) => entry.content)
          .filter((content) => content.includes(' recipe fact '))
          .sort();
      expect(await recipeFacts(stack.gateway.url, 'alpha', 'alpha-key')).toEqual(
        ['Claude Code', 'Claude Desktop', 'Codex', 'Cursor', 'OpenCode'].map((name) => `${name} recipe fact keyed`),
      );
      expect(await recipeFacts(openGateway.url, 'default')).toEqual(
        ['Claude Code', 'Claude Desktop', 'Codex', 'Cursor', 'OpenCode'].map((name) => `${name} recipe fact open`),
      );
    });
  });
});
