/**
 * Whether a browser page at `origin` may call the MCP endpoint. Non-browser MCP clients send no
 * Origin and always may. A page may only from a loopback origin: otherwise a site the user visits
 * could rebind its own name to 127.0.0.1 and drive an open-mode Engram's memory tools (the MCP
 * transport specification requires this check). The Host header is no help here: the rebinding
 * page sets it too.
 */
export function mcpOriginAllowed(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const host = url.hostname;
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}
