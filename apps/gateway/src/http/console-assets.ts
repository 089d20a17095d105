import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { isValidPoolName } from '@engram/domain';
import type { Logger } from '@engram/observability';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `npm run build` puts the console (apps/console/dist), seen from apps/gateway/dist/http. */
const CONSOLE_DIR = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

/**
 * The memory console at `/ui/`: static files from the build, no key needed to fetch them (the page
 * asks for one and sends it to the REST API). Hashed assets never change, so browsers keep them; the
 * index is revalidated on every load so a new build is picked up. `/pools/<pool>/ui/` opens a pool.
 */
export function serveConsole(app: NestFastifyApplication, logger: Logger): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  fastify.get('/ui', (_request, reply) => reply.redirect('/ui/', 301));
  fastify.get<{ Params: { pool: string } }>('/pools/:pool/ui', (request, reply) => openPool(request.params.pool, reply));
  fastify.get<{ Params: { pool: string } }>('/pools/:pool/ui/', (request, reply) => openPool(request.params.pool, reply));
  if (!existsSync(`${CONSOLE_DIR}index.html`)) {
    logger.warn({ dir: CONSOLE_DIR }, 'the console is not built (run npm run build): /ui/ answers 404');
    return;
  }
  app.useStaticAssets({
    root: CONSOLE_DIR,
    prefix: '/ui/',
    cacheControl: false,
    // Only what the build wrote is served; hashed assets are kept for good, everything else revalidates.
    // @fastify/static 10 passes its reply here (Nest's option type still says a Node response).
    setHeaders: ((reply: FastifyReply, path: string) => {
      void reply.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      if (path.endsWith('.html')) {
        void reply.header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'");
        void reply.header('x-content-type-options', 'nosniff');
      }
    }) as unknown as NonNullable<Parameters<NestFastifyApplication['useStaticAssets']>[0]['setHeaders']>,
  });
}

function openPool(pool: string, reply: FastifyReply): unknown {
  // A pool name is never a path: anything else is a 400, like every pool-scoped route.
  if (!isValidPoolName(pool)) {
    return reply.status(400).send({ error: { message: 'invalid pool name', type: 'invalid_request_error', code: 'invalid_pool' } });
  }
  return reply.redirect(`/ui/#/pools/${pool}`, 302);
}
