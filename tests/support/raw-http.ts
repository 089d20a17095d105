import { request } from 'node:http';

export interface RawResponse {
  readonly status: number;
  readonly body: string;
}

/**
 * One HTTP request with the path exactly as given (fetch would normalise `..` and `%2e%2e`) and,
 * optionally, a declared content-length larger than the bytes sent (to test body limits without
 * pushing megabytes through a socket the server is entitled to close).
 */
export function rawRequest(
  url: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, method: options.method, path: options.path, headers: options.headers ?? {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      // The server may answer and close before the declared body is sent.
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}
