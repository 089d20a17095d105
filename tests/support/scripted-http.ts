import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** One request a scripted upstream received, as it arrived. */
export interface RecordedRequest<Body = Record<string, unknown>> {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body (`{}` when there was none). */
  readonly body: Body;
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
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(handler: RequestHandler): Promise<ScriptedHttpServer> {
    const holder: { instance?: ScriptedHttpServer } = {};
    const server = createServer((req, res) => {
      void readJson(req).then(
        async (body) => {
          const recorded: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body };
          holder.instance?.requests.push(recorded);
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
    holder.instance = new ScriptedHttpServer(server, `http://127.0.0.1:${address.port}`);
    return holder.instance;
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

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
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
