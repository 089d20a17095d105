import { describe, expect, it } from '@jest/globals';
import { because } from '@engram/testing';
import { ApiKeys } from './api-keys.js';
import { authMode, isLoopbackAddress, openNetworkWarning } from './network-exposure.js';

describe('network exposure', () => {
  it('counts only loopback listeners as private to this machine', () => {
    for (const host of ['127.0.0.1', '127.0.1.1', 'localhost', 'LOCALHOST', '::1', '[::1]', '::ffff:127.0.0.1']) {
      because(host, () => expect(isLoopbackAddress(host)).toBe(true));
    }
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '10.0.0.2', 'engram.lan', '::ffff:10.0.0.1', '128.0.0.1']) {
      because(host, () => expect(isLoopbackAddress(host)).toBe(false));
    }
  });

  it('warns about an open gateway on the network, and only then', () => {
    const open = ApiKeys.parse(undefined);
    const keyed = ApiKeys.parse('alice=*');
    expect(openNetworkWarning(open, '0.0.0.0')).toMatch(/ENGRAM_API_KEYS is empty and the gateway listens on 0\.0\.0\.0/);
    expect(openNetworkWarning(open, '127.0.0.1')).toBeNull();
    expect(openNetworkWarning(keyed, '0.0.0.0')).toBeNull();
  });

  it('names the auth mode /readyz reports', () => {
    expect(authMode(ApiKeys.parse(''))).toBe('open');
    expect(authMode(ApiKeys.parse('alice=work'))).toBe('keyed');
  });
});
