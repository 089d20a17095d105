import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiKeys } from './api-keys.js';

/**
 * Who may read `/metrics`: a caller presenting METRICS_TOKEN (a Prometheus scraper), or any
 * Engram key. Open only in open mode without METRICS_TOKEN, like every other endpoint then.
 */
export class MetricsAccess {
  private readonly tokenDigest: Buffer | null;

  constructor(
    private readonly keys: ApiKeys,
    metricsToken: string | undefined,
  ) {
    this.tokenDigest = metricsToken ? digest(metricsToken) : null;
  }

  allows(presented: string | undefined): boolean {
    if (this.tokenDigest === null) return this.keys.authenticate(presented) !== null;
    const tokenMatches = presented !== undefined && timingSafeEqual(digest(presented), this.tokenDigest);
    return tokenMatches || (!this.keys.open && this.keys.authenticate(presented) !== null);
  }
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}
