import { describe, expect, it } from '@jest/globals';
import { mcpOriginAllowed } from './mcp-origin.js';

describe('mcpOriginAllowed', () => {
  it('lets clients without an Origin (every non-browser MCP client) and loopback pages through', () => {
    for (const origin of [undefined, 'http://localhost:6274', 'http://127.0.0.1:8080', 'https://127.10.0.1', 'http://[::1]:3000']) {
      expect([origin, mcpOriginAllowed(origin)]).toEqual([origin, true]);
    }
  });

  it('refuses any other page, including one that rebinds its name to 127.0.0.1', () => {
    for (const origin of [
      'http://evil.example:8080',
      'https://localhost.evil.example',
      'http://127.0.0.1.nip.io',
      'null',
      'file://',
      'chrome-extension://abc',
      'not a url',
    ]) {
      expect([origin, mcpOriginAllowed(origin)]).toEqual([origin, false]);
    }
  });
});
