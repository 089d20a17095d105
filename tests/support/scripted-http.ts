import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** One request a scripted upstream received, as it arrived. */
export interface RecordedRequest<Body = Record<string, unknown>> {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body (`{}` when there was none). */
  readonly body: Body;
  /** Size of the body as sent, in bytes. */
  readonly bodyBytes: number;
}

export interface ScriptedServerOptions {
  /**
   * How many of the latest requests `requests` keeps (default: all). A benchmark sending tens of
   * thousands of requests keeps a few, so the upstream's heap and GC do not grow with the run.
   */
  readonly keepRequests?: number;
}

export type RequestHandler = (request: RecordedRequest, response: ServerResponse) => Promise<void> | void;

/**
 * A real HTTP server on a free port for the scripted upstreams: records every request, and
 * on close ends the sockets it still holds (a scripted "hang" must not keep a test alive).
 */
export class ScriptedHttpServer {
  readonly requests: RecordedRequest[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly keepRequests: number,
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(handler: RequestHandler, options: ScriptedServerOptions = {}): Promise<ScriptedHttpServer> {
    const holder: { instance?: ScriptedHttpServer } = {};
    const server = createServer((req, res) => {
      void readJson(req).then(
        async ({ body, bytes }) => {
          const recorded: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, bodyBytes: bytes };
          holder.instance?.record(recorded);
          try {
            await handler(recorded, res);
          } catch (error) {
            // A broken script must fail the test loudly, not leave the client waiting.
            if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { message: `scripted upstream failed: ${String(error)}` } }));
          }
        },
        (error: unknown) => {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: String(error) } }));
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || !address) throw new Error('scripted upstream has no address');
    holder.instance = new ScriptedHttpServer(server, `http://127.0.0.1:${address.port}`, options.keepRequests ?? Number.POSITIVE_INFINITY);
    return holder.instance;
  }

  private record(request: RecordedRequest): void {
    this.requests.push(request);
    if (this.requests.length > this.keepRequests) this.requests.splice(0, this.requests.length - this.keepRequests);
  }

  /** Cuts the connection without an answer (what a crashed upstream looks like). */
  static drop(response: ServerResponse): void {
    response.socket?.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function readJson(req: IncomingMessage): Promise<{ body: Record<string, unknown>; bytes: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('error', reject);
    req.once('end', () => {
      try {
        const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        resolve({ body: bytes.length > 0 ? (JSON.parse(bytes.toString('utf8')) as Record<string, unknown>) : {}, bytes: bytes.length });
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** Splits text into small pieces the way a model streams tokens (never splitting a surrogate pair). */
export function chunksOf(text: string, size: number): string[] {
  const chars = Array.from(text);
  const chunks: string[] = [];
  for (let i = 0; i < chars.length; i += size) chunks.push(chars.slice(i, i + size).join(''));
  return chunks;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Writes one SSE event in the `event:`/`data:` framing both Anthropic and the Responses API use. */
export function writeSse(response: ServerResponse, event: string, data: unknown): void {
  response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Rough token count for scripted usage figures: what matters is that they are positive and add up. */
export function roughTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));
}
