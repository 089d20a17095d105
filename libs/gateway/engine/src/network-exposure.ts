import { isIPv4 } from 'node:net';
import type { ApiKeys } from './api-keys.js';

/** What `/readyz` says about authentication: `open` (no ENGRAM_API_KEYS, anyone may use every pool) or `keyed`. */
export type AuthMode = 'open' | 'keyed';

export function authMode(keys: ApiKeys): AuthMode {
  return keys.open ? 'open' : 'keyed';
}

/** Whether a listen address accepts connections from this machine only. */
export function isLoopbackAddress(host: string): boolean {
  const address = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (address === 'localhost' || address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return isIPv4(v4) && v4.startsWith('127.');
}

/**
 * The start-up warning for a gateway that anyone on the network may use: no ENGRAM_API_KEYS and a
 * listener beyond loopback (as in Docker, where compose publishes it on every interface). Null otherwise.
 */
export function openNetworkWarning(keys: ApiKeys, host: string): string | null {
  if (!keys.open || isLoopbackAddress(host)) return null;
  return (
    `ENGRAM_API_KEYS is empty and the gateway listens on ${host}: anyone who reaches this port can use ` +
    'the upstream through it and read and change every pool. Set ENGRAM_API_KEYS (README, "Pools and keys").'
  );
}
