import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayStack, type GatewayStack } from '../support/gateway-fixture.js';
import { rawRequest, type RawResponse } from '../support/raw-http.js';
import { say } from '../support/scripted-openai-upstream.js';

/**
 * An open-mode gateway (no ENGRAM_API_KEYS) and the web pages its person visits: requests as a browser
 * sends them, raw (fetch would not let a test set Host or send a cross-site form post as a browser does).
 */
describe('an open gateway refuses browser requests from other sites and other host names', () => {
  let stack: GatewayStack;
  let port: string;

  beforeAll(async () => {
    stack = await startGatewayStack({ responder: () => say('ok'), gatewayEnv: { ENGRAM_ALLOWED_HOSTS: 'engram.lan,.home.arpa' } });
    port = new URL(stack.gateway.url).port;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** What a page's `<form>` or `fetch(..., {mode: 'no-cors'})` sends: text/plain needs no preflight. */
  const formPost = (path: string, body: unknown, headers: Record<string, string>): Promise<RawResponse> =>
    rawRequest(stack.gateway.url, {
      method: 'POST',
      path,
      headers: { 'content-type': 'text/plain', host: `127.0.0.1:${port}`, ...headers },
      body: JSON.stringify(body),
    });
  const get = (path: string, headers: Record<string, string>): Promise<RawResponse> =>
    rawRequest(stack.gateway.url, { method: 'GET', path, headers });
  const stored = async (pool: string): Promise<string[]> =>
    ((await (await fetch(`${stack.gateway.url}/engram/pools/${pool}/memories`)).json()) as { data: { content: string }[] }).data.map(
      (entry) => entry.content,
    );
  const errorOf = (response: RawResponse): { code: string; message: string } =>
    (JSON.parse(response.body) as { error: { code: string; message: string } }).error;

  it('a page of another site cannot store a memory with a form-like POST', async () => {
    const response = await formPost('/engram/pools/xsite/memories', { content: 'planted by evil.example' }, { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
    expect(errorOf(response)).toMatchObject({ code: 'origin_not_allowed' });
    expect(errorOf(response).message).toContain('ENGRAM_API_KEYS');
    expect(await stored('xsite')).toEqual([]);
  });

  it("a page of another site cannot spend the server's upstream through /v1/chat/completions", async () => {
    const before = stack.upstream.requests.length;
    const response = await formPost(
      '/v1/chat/completions',
      { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] },
      { origin: 'https://evil.example' },
    );
    expect(response.status).toBe(403);
    expect(stack.upstream.requests.length).toBe(before);
  });

  it('a page that rebinds its name to the server cannot read the pools (Host: evil.example), and the 403 names the setting', async () => {
    // Same-origin from the page's point of view: its Origin (if any) and Host are both its own name.
    const rebound: Record<string, string>[] = [{ host: 'evil.example' }, { host: `evil.example:${port}`, origin: `http://evil.example:${port}` }];
    for (const headers of rebound) {
      const response = await get('/engram/pools', headers);
      expect([headers, response.status]).toEqual([headers, 403]);
      expect(errorOf(response)).toMatchObject({ code: 'host_not_allowed' });
      expect(errorOf(response).message).toContain('ENGRAM_ALLOWED_HOSTS');
      expect(response.body).not.toContain('"pool"');
    }
    expect((await get('/healthz', { host: 'evil.example' })).status).toBe(403);
  });

  it('SDKs and desktop tools (no Origin), the console at its own address, a LAN address and listed names keep working', async () => {
    const allowed: Record<string, string>[] = [
      { host: `127.0.0.1:${port}` },
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
      // The console as the browser reached it over the LAN: Origin and Host agree.
      { host: `192.168.1.20:${port}`, origin: `http://192.168.1.20:${port}` },
      { host: `[fd00::20]:${port}` },
      { host: `engram.localhost:${port}` },
      { host: `engram.lan:${port}`, origin: `http://engram.lan:${port}` },
      { host: `nas.home.arpa:${port}`, origin: `https://nas.home.arpa:${port}` },
      // A page on this machine (a local tool's web UI), as /mcp allows.
      { host: `127.0.0.1:${port}`, origin: 'http://localhost:5173' },
    ];
    for (const [index, headers] of allowed.entries()) {
      const response = await formPost(
        '/engram/pools/allowed/memories',
        { content: `allowed request number ${index}` },
        { ...headers, 'content-type': 'application/json' },
      );
      expect([headers, response.status]).toEqual([headers, 201]);
    }
    expect((await stored('allowed')).length).toBe(allowed.length);
    // A request from another site to a listed name is still a request from another site.
    const crossSite = await formPost(
      '/engram/pools/allowed/memories',
      { content: 'no' },
      { host: `engram.lan:${port}`, origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
  });

  it('says what it refused in its log', () => {
    expect(stack.gateway.process.output()).toContain('open gateway refused a request from another site');
    expect(stack.gateway.process.output()).toContain('open gateway refused a request for another host name');
  });
});
