import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { readonly page: 'pools' }
  | { readonly page: 'memories'; readonly pool: string }
  | { readonly page: 'tier1'; readonly pool: string }
  | { readonly page: 'activity'; readonly pool: string }
  | { readonly page: 'history'; readonly pool: string; readonly id: string };

const POOL = '([a-z0-9][a-z0-9._-]{0,63})';

/** Hash routes (`#/pools/p/tier1`), so the gateway serves one index for every page. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  let match = new RegExp(`^/pools/${POOL}/memories/([A-Za-z0-9_-]{1,64})$`).exec(path);
  if (match) return { page: 'history', pool: match[1]!, id: match[2]! };
  match = new RegExp(`^/pools/${POOL}/(tier1|activity)$`).exec(path);
  if (match) return { page: match[2] as 'tier1' | 'activity', pool: match[1]! };
  match = new RegExp(`^/pools/${POOL}/?(memories)?$`).exec(path);
  if (match) return { page: 'memories', pool: match[1]! };
  return { page: 'pools' };
}

export function href(route: Route): string {
  switch (route.page) {
    case 'pools':
      return '#/';
    case 'memories':
      return `#/pools/${route.pool}`;
    case 'history':
      return `#/pools/${route.pool}/memories/${route.id}`;
    default:
      return `#/pools/${route.pool}/${route.page}`;
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
