import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, session, whenUnauthorized, type PoolSummary } from './api.js';
import { Login } from './pages/login.js';
import { ActivityPage } from './pages/activity.js';
import { HistoryPage } from './pages/history.js';
import { MemoriesPage } from './pages/memories.js';
import { PoolsPage } from './pages/pools.js';
import { Tier1Page } from './pages/tier1.js';
import { href, useRoute, type Route } from './router.js';

type Access = { state: 'checking' } | { state: 'login'; error?: string } | { state: 'in'; pools: PoolSummary[] } | { state: 'down'; error: string };

/**
 * Asks the API which pools this tab may see: open mode answers without a key, keyed mode answers
 * 401 and the page asks for a key once (kept in sessionStorage).
 */
export function App() {
  const route = useRoute();
  const [access, setAccess] = useState<Access>({ state: 'checking' });

  const load = async (): Promise<void> => {
    const hadKey = session.key() !== null;
    try {
      const { data } = await api.pools();
      setAccess({ state: 'in', pools: data });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        session.clear();
        setAccess({ state: 'login', ...(hadKey ? { error: 'That key was not accepted.' } : {}) });
      } else {
        setAccess({ state: 'down', error: error instanceof Error ? error.message : String(error) });
      }
    }
  };
  useEffect(() => {
    whenUnauthorized(() => {
      session.clear();
      setAccess({ state: 'login', error: 'The key is no longer accepted.' });
    });
    void load();
  }, []);

  if (access.state === 'checking')
    return (
      <main class="page" aria-busy="true">
        Loading…
      </main>
    );
  if (access.state === 'login') {
    return (
      <Login
        error={access.error}
        onKey={(key) => {
          session.setKey(key);
          setAccess({ state: 'checking' });
          void load();
        }}
      />
    );
  }
  if (access.state === 'down') {
    return (
      <main class="page">
        <p role="alert">Engram did not answer: {access.error}</p>
        <button type="button" onClick={() => void load()}>
          Try again
        </button>
      </main>
    );
  }
  const granted = access.pools.map((pool) => pool.pool);
  const pool = 'pool' in route ? route.pool : undefined;
  return (
    <>
      <Header
        route={route}
        keyed={session.key() !== null}
        onSignOut={() => {
          session.clear();
          setAccess({ state: 'login' });
        }}
      />
      <main class="page" id="main">
        {pool !== undefined && !granted.includes(pool) ? (
          <p role="alert">This key does not reach the pool “{pool}”.</p>
        ) : (
          <Page route={route} pools={access.pools} onChanged={() => void load()} />
        )}
      </main>
    </>
  );
}

function Page({ route, pools, onChanged }: { route: Route; pools: PoolSummary[]; onChanged: () => void }) {
  switch (route.page) {
    case 'pools':
      return <PoolsPage pools={pools} onRefresh={onChanged} />;
    case 'memories':
      return <MemoriesPage pool={route.pool} />;
    case 'tier1':
      return <Tier1Page pool={route.pool} />;
    case 'activity':
      return <ActivityPage pool={route.pool} lastSeq={pools.find((pool) => pool.pool === route.pool)?.lastSeq ?? 0} />;
    case 'history':
      return <HistoryPage pool={route.pool} id={route.id} />;
  }
}

function Header({ route, keyed, onSignOut }: { route: Route; keyed: boolean; onSignOut: () => void }) {
  const pool = 'pool' in route ? route.pool : undefined;
  const tab = (page: 'memories' | 'tier1' | 'activity', label: string) =>
    pool === undefined ? null : (
      <a href={href({ page, pool })} aria-current={route.page === page ? 'page' : undefined}>
        {label}
      </a>
    );
  return (
    <header class="top">
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <nav aria-label="Console">
        <a class="brand" href={href({ page: 'pools' })} aria-current={route.page === 'pools' ? 'page' : undefined}>
          Engram
        </a>
        {pool !== undefined && <span class="crumb">{pool}</span>}
        {tab('memories', 'Memories')}
        {tab('tier1', 'What the model sees')}
        {tab('activity', 'Activity')}
      </nav>
      {keyed && (
        <button type="button" class="quiet" onClick={onSignOut}>
          Forget key
        </button>
      )}
    </header>
  );
}
