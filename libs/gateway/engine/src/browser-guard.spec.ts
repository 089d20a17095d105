import { describe, expect, it } from '@jest/globals';
import { AllowedHosts, browserRefusal } from './browser-guard.js';

const none = new AllowedHosts([]);
const reason = (headers: { host?: string; origin?: string }, allowed = none) =>
  browserRefusal({ host: headers.host, origin: headers.origin }, allowed)?.reason ?? 'allowed';

describe('browserRefusal (open mode)', () => {
  it('answers IP literals, localhost and *.localhost, and the names ENGRAM_ALLOWED_HOSTS lists', () => {
    const listed = new AllowedHosts(['engram.lan', '.home.arpa']);
    for (const host of ['127.0.0.1:8080', '192.168.1.20', '[::1]:8080', '[fd00::1]', 'localhost:8080', 'LOCALHOST', 'ui.engram.localhost:8080']) {
      expect([host, reason({ host })]).toEqual([host, 'allowed']);
    }
    for (const host of ['engram.lan:8080', 'nas.home.arpa']) expect([host, reason({ host }, listed)]).toEqual([host, 'allowed']);
    expect(reason({ host: 'anything.example' }, new AllowedHosts(['*']))).toBe('allowed');
    // HTTP/1.0 without Host: no browser sends that.
    expect(reason({})).toBe('allowed');
  });

  it('refuses any other Host (a page that rebinds its name to the server), naming the setting', () => {
    const listed = new AllowedHosts(['engram.lan', '.home.arpa']);
    for (const host of [
      'evil.example',
      'evil.example:8080',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      'engram.lan.evil.example',
      'home.arpa',
      'a b',
      'user@host',
    ]) {
      expect([host, reason({ host }, listed)]).toEqual([host, 'host']);
    }
    expect(browserRefusal({ host: 'evil.example', origin: undefined }, none)?.message).toContain('ENGRAM_ALLOWED_HOSTS');
  });

  it('lets a browser request through only from the origin it was sent to, or from a page on this machine', () => {
    expect(reason({ host: '192.168.1.20:8080', origin: 'http://192.168.1.20:8080' })).toBe('allowed');
    expect(reason({ host: 'localhost:8080', origin: 'http://localhost:8080' })).toBe('allowed');
    expect(reason({ host: '192.168.1.20:8080', origin: 'http://localhost:3000' })).toBe('allowed');
    expect(reason({ host: 'nas.home.arpa', origin: 'https://nas.home.arpa' }, new AllowedHosts(['.home.arpa']))).toBe('allowed');
    for (const origin of [
      'https://evil.example',
      'http://192.168.1.20:9999',
      'http://192.168.1.21:8080',
      'null',
      'file://',
      'chrome-extension://abc',
    ]) {
      expect([origin, reason({ host: '192.168.1.20:8080', origin })]).toEqual([origin, 'origin']);
    }
  });
});
