import { isIP } from 'node:net';
import { mcpOriginAllowed } from './mcp/mcp-origin.js';

/**
 * The names ENGRAM_ALLOWED_HOSTS lists (validated by the config): a name (`engram.lan`), every name
 * under a domain (`.home.arpa`), or `*` for any (a reverse proxy in front checks Host itself).
 */
export class AllowedHosts {
  constructor(private readonly entries: readonly string[]) {}

  /** Whether a host name (no port) is listed. */
  lists(hostname: string): boolean {
    return this.entries.some((entry) => entry === '*' || entry === hostname || (entry.startsWith('.') && hostname.endsWith(entry)));
  }
}

/** What a browser sends that tells where a request comes from and whom it thinks it talks to. */
export interface BrowserHeaders {
  readonly host: string | undefined;
  readonly origin: string | undefined;
}

/** Why an open-mode gateway refuses a request: its Host, or the web page (Origin) it comes from. */
export interface BrowserRefusal {
  readonly reason: 'host' | 'origin';
  readonly message: string;
}

/**
 * In open mode anyone who reaches the port may use Engram, and a web page the person visits reaches it
 * too: through their browser, with a form-like POST (no preflight) or, by rebinding its own name to the
 * server's address, with reads whose answers it can see. Two checks close both, on every route:
 *
 * - Host: only IP literals, `localhost` and `*.localhost`, and the names in ENGRAM_ALLOWED_HOSTS. A
 *   rebinding page's requests carry its own name (`Host: evil.example`), so they end here, as dev
 *   servers guard against rebinding.
 * - Origin: a browser request (it has an Origin) only from the gateway's own origin (the console, as
 *   the browser reached it) or from a page on this machine (a loopback origin, as `/mcp` allows).
 *
 * Clients that are not browsers (SDKs, desktop tools, curl) send no Origin and keep working, and so
 * does a person reaching the server by its LAN address. Null when the request may go on.
 */
export function browserRefusal(headers: BrowserHeaders, allowed: AllowedHosts): BrowserRefusal | null {
  const host = headers.host === undefined ? undefined : hostOf(headers.host);
  if (headers.host !== undefined && (host === undefined || !hostAllowed(host.hostname, allowed))) {
    return {
      reason: 'host',
      message:
        `this Engram is open (no ENGRAM_API_KEYS) and answers only IP addresses, localhost and the names in ENGRAM_ALLOWED_HOSTS; ` +
        `add ${JSON.stringify(host?.hostname ?? headers.host)} to ENGRAM_ALLOWED_HOSTS to reach it by that name`,
    };
  }
  if (headers.origin === undefined || mcpOriginAllowed(headers.origin)) return null;
  const origin = originHost(headers.origin);
  if (origin !== undefined && host !== undefined && origin === host.host) return null;
  return {
    reason: 'origin',
    message:
      `this Engram is open (no ENGRAM_API_KEYS) and refuses requests from web pages of other sites (${headers.origin}); ` +
      'use the console at its own address, or set ENGRAM_API_KEYS',
  };
}

function hostAllowed(hostname: string, allowed: AllowedHosts): boolean {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) !== 0) return true;
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  return allowed.lists(hostname);
}

/** `name:port` (or `[v6]:port`) of a Host header, lowercased and with a default port dropped, as URL does. */
function hostOf(value: string): { readonly hostname: string; readonly host: string } | undefined {
  try {
    const url = new URL(`http://${value.trim()}`);
    if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return undefined;
    return { hostname: url.hostname, host: url.host };
  } catch {
    return undefined;
  }
}

/** The `name:port` an Origin names, compared with the Host header (a TLS proxy in front may change the scheme). */
function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    // An https origin's default port is 443; Host then carries none either.
    return url.host;
  } catch {
    return undefined;
  }
}
