// Container healthcheck without curl: exits 0 when the URL answers 2xx within 3 s.
const url = process.argv[2];
if (!url) {
  console.error('usage: node ops/healthcheck.mjs <url>');
  process.exit(2);
}
try {
  const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  process.exit(response.ok ? 0 : 1);
} catch (error) {
  console.error(`${url}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
